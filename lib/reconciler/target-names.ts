/**
 * The fixed IAM role names of a multi-account setup (docs/multi-account.md), so that each side
 * can name the other's role before either is deployed.
 */

/** Default name of a target account's `ReconcilerTargetRole` (lib/target-role.ts). */
export const DEFAULT_TARGET_ROLE_NAME = 'ecs-reconciler-target';

/** The partition of a Region: `aws-cn` for China, `aws-us-gov` for GovCloud, else `aws`. */
export function partitionOf(region: string): string {
  return region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
}

/** `arn:<partition of region>:iam::<account>:role/ecs-reconciler-target` (a literal, never a token). */
export function defaultTargetRoleArn(account: string, region: string): string {
  return `arn:${partitionOf(region)}:iam::${account}:role/${DEFAULT_TARGET_ROLE_NAME}`;
}

/**
 * The ARN of a reconciler's function role given its `functionRoleName`, for a target account's
 * `ReconcilerTargetRole` (`reconcilerRoleArn`) written before the reconciler is deployed:
 * `arn:<partition of region>:iam::<account>:role/<roleName>`. IAM role ARNs carry no Region; the
 * Region only picks the partition.
 * @param account the reconciler's 12-digit account id.
 * @param roleName the reconciler's `functionRoleName` prop.
 * @param region any Region of the reconciler's partition (default: a commercial one).
 */
export function reconcilerFunctionRoleArn(account: string, roleName: string, region = 'us-east-1'): string {
  return `arn:${partitionOf(region)}:iam::${account}:role/${roleName}`;
}
