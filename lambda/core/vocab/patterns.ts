/**
 * Shapes of identifiers and ARNs that the ECS API reference documents, as regular expressions
 * shared by the shorthand spec (`../spec.ts`) and the declarations of this folder.
 */

const PARTITION = 'aws(?:-[a-z]+)*';
const REGION = '[a-z]{2}(?:-[a-z]+)+-\\d{1,2}';
const ACCOUNT = '\\d{12}';

/** Cluster, service and container names: 1-255 letters, numbers, hyphens, underscores. */
export const NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;
/** REPOSITORY[:TAG] (255 characters at most) or REPOSITORY@sha256:DIGEST (255 before the @). */
export const IMAGE_RE = /^[A-Za-z0-9][A-Za-z0-9._\-/:#]{0,254}(?:@sha256:[A-Fa-f0-9]{64})?$/;
export const IMAGE_ALLOWED =
  'must be an image reference, REPOSITORY[:TAG] or REPOSITORY@sha256:DIGEST, of letters, numbers and - _ . : / # ' +
  '(ECS: at most 255 characters before any @)';
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const ROLE_ARN_RE = new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:role/(?:[\\w+=,.@-]+/)*[\\w+=,.@-]{1,64}$`);
export const ROLE_ARN_ALLOWED = 'must be an IAM role ARN (arn:aws:iam::123456789012:role/NAME)';
export const SSM_NAME_RE = /^\/?[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;
export const SSM_ARN_RE = new RegExp(`^arn:${PARTITION}:ssm:${REGION}:${ACCOUNT}:parameter/[A-Za-z0-9_./-]+$`);
/** Secret ARN, optionally with ECS's `:json-key:version-stage:version-id` suffix. */
export const SECRETS_MANAGER_ARN_RE = new RegExp(
  `^arn:${PARTITION}:secretsmanager:${REGION}:${ACCOUNT}:secret:[A-Za-z0-9/_+=.@-]+(?::[^:]*){0,3}$`,
);
/** SSM parameter name or ARN, or Secrets Manager secret ARN: what ECS `valueFrom` takes. */
export const SECRET_REF_RE = new RegExp(`(?:${SSM_NAME_RE.source})|(?:${SSM_ARN_RE.source})|(?:${SECRETS_MANAGER_ARN_RE.source})`);
export const SECRET_REF_ALLOWED =
  'must be an SSM parameter name (/app/db-password) or ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME), ' +
  'or a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)';
export const TARGET_GROUP_ARN_RE = new RegExp(
  `^arn:${PARTITION}:elasticloadbalancing:${REGION}:${ACCOUNT}:targetgroup/[A-Za-z0-9-]{1,32}/[0-9a-f]{16}$`,
);
export const TARGET_GROUP_ARN_ALLOWED =
  'must be a target group ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID)';
export const SUBNET_RE = /^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
export const SECURITY_GROUP_RE = /^sg-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
/** ECS tag keys and values: letters, numbers, spaces, and `+ - = . _ : / @`. */
export const TAG_CHARS_RE = /^[\p{L}\p{Z}\p{N}+\-=._:/@]*$/u;
/** `LATEST` or a Fargate platform version (`1.4.0`). */
export const PLATFORM_VERSION_RE = /^(?:LATEST|\d+\.\d+\.\d+)$/;
/** ECS port mapping name (Service Connect refers to it). */
export const PORT_NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
/** A port range `FROM-TO`. */
export const PORT_RANGE_RE = /^\d{1,5}-\d{1,5}$/;
/** S3 object ARN (`environmentFiles`). */
export const S3_OBJECT_ARN_RE = new RegExp(`^arn:${PARTITION}:s3:::[a-z0-9.-]{3,63}/.+$`);
/** EFS file system id. */
export const EFS_ID_RE = /^fs-[0-9a-f]{8,40}$/;
export const EFS_ACCESS_POINT_RE = /^fsap-[0-9a-f]{8,40}$/;
/** S3 Files file system ARN (`arn:aws:s3files:REGION:ACCOUNT:file-system/ID`), and its access points. */
export const S3FILES_FILE_SYSTEM_ARN_RE = new RegExp(`^arn:${PARTITION}:s3files:${REGION}:${ACCOUNT}:file-system/[A-Za-z0-9-]+$`);
export const S3FILES_ACCESS_POINT_ARN_RE = new RegExp(`^arn:${PARTITION}:s3files:${REGION}:${ACCOUNT}:(?:file-system/[A-Za-z0-9-]+/)?access-point/[A-Za-z0-9-]+$`);
/** CloudWatch alarm name: 1-255 characters. */
export const ALARM_NAME_RE = /^.{1,255}$/s;
/** Cloud Map service ARN (`serviceRegistries[].registryArn`). */
export const CLOUD_MAP_ARN_RE = new RegExp(`^arn:${PARTITION}:servicediscovery:${REGION}:${ACCOUNT}:service/srv-[a-z0-9]+$`);
/** Any ARN (used where ECS takes one of several resource types). */
export const ANY_ARN_RE = new RegExp(`^arn:${PARTITION}:[a-z0-9-]+:[a-z0-9-]*:(?:${ACCOUNT})?:.+$`);
/** Lambda function ARN, optionally with a version or alias (a lifecycle hook's `hookTargetArn`). */
export const LAMBDA_FUNCTION_ARN_RE = new RegExp(`^arn:${PARTITION}:lambda:${REGION}:${ACCOUNT}:function:[A-Za-z0-9_-]{1,64}(?::[A-Za-z0-9_$-]{1,128})?$`);
export const LAMBDA_FUNCTION_ARN_ALLOWED = 'must be a Lambda function ARN (arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER])';
/** An Application or Network Load Balancer listener rule or listener ARN (`advancedConfiguration`). */
export const LISTENER_RULE_ARN_RE = new RegExp(`^arn:${PARTITION}:elasticloadbalancing:${REGION}:${ACCOUNT}:listener(?:-rule)?/(?:app|net)/[A-Za-z0-9-]{1,32}/[0-9a-f]{16}/[0-9a-f]{16}(?:/[0-9a-f]{16})?$`);
export const LISTENER_RULE_ARN_ALLOWED =
  'must be a listener rule ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:listener-rule/app/LB/ID/LISTENER/RULE) or, for a Network Load Balancer, a listener ARN';
/** VPC Lattice target group ARN (`vpcLatticeConfigurations[].targetGroupArn`). */
export const LATTICE_TARGET_GROUP_ARN_RE = new RegExp(`^arn:${PARTITION}:vpc-lattice:${REGION}:${ACCOUNT}:targetgroup/tg-[0-9a-z]+$`);
export const LATTICE_TARGET_GROUP_ARN_ALLOWED = 'must be a VPC Lattice target group ARN (arn:aws:vpc-lattice:REGION:ACCOUNT:targetgroup/tg-ID)';
/** VPC Lattice listener or listener rule ARN (a Lattice configuration's `advancedConfiguration`). */
export const LATTICE_LISTENER_ARN_RE = new RegExp(`^arn:${PARTITION}:vpc-lattice:${REGION}:${ACCOUNT}:service/svc-[0-9a-z]+/listener/listener-[0-9a-z]+(?:/rule/rule-[0-9a-z]+)?$`);
export const LATTICE_LISTENER_ARN_ALLOWED = 'must be a VPC Lattice listener or listener rule ARN (arn:aws:vpc-lattice:REGION:ACCOUNT:service/svc-ID/listener/listener-ID[/rule/rule-ID])';
