/**
 * cdk-nag 3 (AwsSolutions) on the stack: zero unacknowledged findings, every acknowledgement
 * needed and explained, and the app wiring (`buildReconcilerApp`) failing a synth on a new finding.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterEach, describe, expect, it } from 'vitest';
import { buildReconcilerApp } from '../../lib/app';
import type { EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { EcsReconcilerStack } from '../../lib/reconciler-stack';
import { cdkJsonContext } from '../support/cdk-json';
import { ReconcilerTargetStack } from '../../lib/target-role';

/** AwsSolutionsChecks that records which acknowledgements actually silenced a finding. */
class RecordingChecks extends AwsSolutionsChecks {
  readonly used = new Set<string>();
  constructor() {
    super();
    // cdk-nag 3 consults `isAcknowledged(resource, ruleId)` for every finding it would report.
    const self = this as unknown as { isAcknowledged: (node: IConstruct, id: string) => boolean };
    const original = self.isAcknowledged.bind(this);
    self.isAcknowledged = (node, id) => {
      const acknowledged = original(node, id);
      if (acknowledged) this.used.add(id);
      return acknowledged;
    };
  }
}

/** Every acknowledgement recorded in the tree under `root`: rule id -> reason. */
function acknowledgements(root: IConstruct): Map<string, string> {
  const found = new Map<string, string>();
  for (const c of root.node.findAll()) {
    for (const entry of c.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.set(id.replace(/^annotation::/i, ''), reason);
      }
    }
  }
  return found;
}

const configurations: { case: string; props: (app: App) => EcsReconcilerProps }[] = [
  {
    case: 'existing clusters, allow-lists, email',
    props: () => ({
      clusters: ['web', 'jobs'],
      defaultSubnets: ['subnet-0a1'],
      defaultSecurityGroups: ['sg-0c3'],
      allowedTaskRoles: ['arn:aws:iam::123456789012:role/app-task'],
      allowedExecutionRoles: ['arn:aws:iam::123456789012:role/app-exec'],
      allowedImageRegistries: ['public.ecr.aws'],
      alarmEmail: 'ops@example.com',
    }),
  },
  { case: 'quick start', props: () => ({ createCluster: true }) },
  {
    case: 'fan-out to two target accounts',
    props: () => ({
      clusters: ['web'],
      targets: [
        { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'] },
        { name: 'prod', account: '333333333333', region: 'us-east-1' },
      ],
    }),
  },
  {
    case: 'customer managed table key',
    props: (app) => ({
      clusters: ['web'],
      tableEncryptionKey: kms.Key.fromKeyArn(new Stack(app, 'Keys'), 'Key', 'arn:aws:kms:eu-west-1:123456789012:key/abcd-1234'),
    }),
  },
];

describe('cdk-nag AwsSolutions', () => {
  it.each(configurations)('has zero unacknowledged findings: $case', ({ props }) => {
    // Prepare
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new EcsReconcilerStack(app, 'EcsReconciler', { reconciler: props(app) });
    // Act
    const report = new AwsSolutionsChecks().validateScope(stack);
    // Assess
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it.each(configurations)('every acknowledgement silences a real finding and carries a reason: $case', ({ props }) => {
    // Prepare
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new EcsReconcilerStack(app, 'EcsReconciler', { reconciler: props(app) });
    const checks = new RecordingChecks();
    // Act
    checks.validateScope(stack);
    // Assess: our acknowledgements only (aws-cdk-lib adds some of its own for other validators).
    const ours = [...acknowledgements(stack)].filter(([id]) => id.startsWith('AwsSolutions-'));
    expect(ours.length).toBeGreaterThan(0);
    for (const [id, reason] of ours) {
      expect(checks.used, `unused acknowledgement ${id}`).toContain(id);
      expect(reason.length, `reason of ${id}`).toBeGreaterThan(40);
    }
  });

  it('acknowledges the IAM wildcards one finding at a time, never the whole rule', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new EcsReconcilerStack(app, 'EcsReconciler', { reconciler: { clusters: ['web'] } });
    const ids = [...acknowledgements(stack).keys()];
    expect(ids).not.toContain('AwsSolutions-IAM5');
    expect(ids).toEqual(
      expect.arrayContaining([
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:service/web/*]',
      ]),
    );
  });
});

describe('cdk-nag AwsSolutions on the target account stack', () => {
  it('has zero unacknowledged findings, and its acknowledgement silences a real finding', () => {
    // Prepare
    const app = new App({ context: cdkJsonContext() });
    const stack = new ReconcilerTargetStack(app, 'Target', {
      env: { account: '222222222222', region: 'eu-west-1' },
      reconcilerRoleArn: 'arn:aws:iam::111111111111:role/Reconciler-FunctionRole',
      clusters: ['web'],
      passableRoles: ['arn:aws:iam::222222222222:role/app-exec'],
    });
    const checks = new RecordingChecks();
    // Act
    const report = checks.validateScope(stack);
    // Assess
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    for (const [id] of [...acknowledgements(stack)].filter(([id]) => id.startsWith('AwsSolutions-'))) expect(checks.used).toContain(id);
  });
});

describe('app wiring (bin/app.ts)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function anApp(): App {
    const outdir = mkdtempSync(join(tmpdir(), 'ecsr-nag-'));
    dirs.push(outdir);
    return new App({
      outdir,
      context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], clusters: 'web', subnets: 'subnet-0a1', securityGroups: 'sg-0c3' },
    });
  }

  it('synthesizes when nothing is unacknowledged', () => {
    const app = anApp();
    buildReconcilerApp(app);
    expect(() => app.synth()).not.toThrow();
  });

  it('runs cdk-nag on synth: an unacknowledged finding fails it', () => {
    // Prepare: the app as bin/app.ts builds it, plus a wildcard nobody acknowledged.
    const app = anApp();
    const stack = buildReconcilerApp(app);
    new iam.Role(stack, 'Extra', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }).addToPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['*'] }),
    );
    // Act / Assess
    expect(() => app.synth()).toThrow(/AwsSolutions-IAM5\[Resource::\*\][\s\S]*validation-report/);
  });
});
