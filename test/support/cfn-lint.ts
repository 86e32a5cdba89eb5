/**
 * What the cfn-lint test needs: the synthesized templates of an app, and the findings this project
 * acknowledges, each with its reason.
 */
import type { App } from 'aws-cdk-lib';

/** One finding of `cfn-lint --format json`. */
export interface CfnLintFinding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Location: { Path: (string | number)[] };
  Rule: { Id: string };
}

/** Every stack template of `app`, by stack name. */
export function lintableTemplates(app: App): { name: string; template: unknown }[] {
  const assembly = app.synth();
  return assembly.stacks.map((s) => ({ name: s.stackName, template: s.template }));
}

interface Acknowledged {
  rule: string;
  /** Matches `Location.Path` joined by `/`. */
  path: RegExp;
  reason: string;
}

/** Findings accepted, each narrowly. Informational findings are not counted. */
export const ACKNOWLEDGED: readonly Acknowledged[] = [
  {
    rule: 'W3005',
    path: /^Resources\/ReconcilerFunction[0-9A-F]{8}\/DependsOn\/\d+$/,
    reason:
      "aws-cdk-lib's Function adds DependsOn on its role and the role's default policy, so the policy exists before the first invocation; the role's DependsOn is redundant with the GetAtt but harmless.",
  },
];

/** The errors and warnings not in {@link ACKNOWLEDGED}. */
export function unacknowledged(findings: readonly CfnLintFinding[]): CfnLintFinding[] {
  return findings.filter(
    (f) => f.Level !== 'Informational' && !ACKNOWLEDGED.some((a) => a.rule === f.Rule.Id && a.path.test(f.Location.Path.join('/'))),
  );
}
