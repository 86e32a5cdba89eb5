/**
 * The CDK app as a user runs it: `cdk synth` in a child process with context values, offline
 * (in a network namespace with no interfaces, when `unshare` is available), then the bundled
 * function (the real `lambda/handler.ts`, built by esbuild during that synth) run on this Node
 * against moto, checking that what it emits is what the alarms watch.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateClusterCommand, ECSClient } from '@aws-sdk/client-ecs';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specsTableDefinition } from '../../lambda/adapters/dynamo-spec-store';
import { ENV } from '../../lambda/config';
import { alarmDefinitions } from '../../lambda/core/alarms';
import { ContextError, reconcilerPropsFromContext } from '../../lib/reconciler-stack';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CDK = join(ROOT, 'node_modules', '.bin', 'cdk');
const offline = spawnSync('unshare', ['-rn', 'true']).status === 0;

interface CdkRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

const SYNTH_TIMEOUT_MS = 600_000;

/** Runs the CDK CLI from the repository root, in a network namespace without network if possible. */
function cdk(args: string[], outdir: string): CdkRun {
  const command = offline ? 'unshare' : CDK;
  const argv = offline ? ['-rn', CDK, ...args, '-o', outdir] : [...args, '-o', outdir];
  const r = spawnSync(command, argv, {
    cwd: ROOT,
    encoding: 'utf8',
    // Minutes on a busy 2-core machine (bundling, cdk-nag); generous, never a measure.
    timeout: SYNTH_TIMEOUT_MS,
    // No credentials and no region: synth must not need them.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Minimal EC2 Query API call to moto (no EC2 client in this project's dependencies). */
async function ec2(moto: MotoServer, params: Record<string, string>): Promise<string> {
  const res = await fetch(`${moto.endpoint}/`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      // moto reads service and region from the credential scope; it does not check signatures.
      Authorization: 'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({ Version: '2016-11-15', ...params }),
  });
  return res.text();
}

const capture = (xml: string, tag: string): string => {
  const m = new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(xml);
  if (!m) throw new Error(`no <${tag}> in moto answer: ${xml.slice(0, 300)}`);
  return m[1];
};

type Json = Record<string, unknown>;

describe('cdk synth (child process, as a user runs it)', { ...needs('moto'), timeout: SYNTH_TIMEOUT_MS }, () => {
  let moto: MotoServer;
  let outdir: string;
  let run: CdkRun;
  let template: { Resources: Record<string, { Type: string; Properties: Json }> };
  let subnetId: string;
  let securityGroupId: string;

  beforeAll(async () => {
    // Prepare: moto's network first, so the synthesized defaults are subnets moto knows.
    moto = await startMoto();
    const vpcId = capture(await ec2(moto, { Action: 'CreateVpc', CidrBlock: '10.0.0.0/16' }), 'vpcId');
    subnetId = capture(await ec2(moto, { Action: 'CreateSubnet', VpcId: vpcId, CidrBlock: '10.0.1.0/24' }), 'subnetId');
    securityGroupId = capture(
      await ec2(moto, { Action: 'CreateSecurityGroup', VpcId: vpcId, GroupName: 'tasks', GroupDescription: 'tasks' }),
      'groupId',
    );
    outdir = mkdtempSync(join(tmpdir(), 'ecsr-synth-'));
    // Act
    run = cdk(
      [
        'synth',
        '-q',
        '-c', 'clusters=web,jobs',
        '-c', `subnets=${subnetId}`,
        '-c', `securityGroups=${securityGroupId}`,
        '-c', 'alarmEmail=ops@example.com',
        '-c', 'lagGraceSeconds=120',
      ],
      outdir,
    );
    if (run.status === 0) template = JSON.parse(readFileSync(join(outdir, 'EcsReconciler.template.json'), 'utf8'));
  }, SYNTH_TIMEOUT_MS);

  afterAll(async () => {
    await moto?.stop();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  const resourcesOf = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

  it(`succeeds ${offline ? 'with no network at all' : '(unshare unavailable: network not isolated)'}`, () => {
    expect(run.stderr).not.toMatch(/Error|AwsSolutions/);
    expect(run.status).toBe(0);
  });

  it('prints no "feature flags are not configured" notice: cdk.json pins them', () => {
    expect(run.status).toBe(0);
    // The CLI's notice reads "85 feature flags are not configured. Run 'cdk flags ...'".
    expect(run.stderr + run.stdout).not.toMatch(/feature flags? (?:are|is) not configured/i);
  });

  it('writes a template built from the context values', () => {
    const [, fn] = resourcesOf('AWS::Lambda::Function')[0];
    const env = (fn.Properties.Environment as { Variables: Json }).Variables;
    expect(env[ENV.managedClusters]).toBe('web,jobs');
    expect(env[ENV.defaultSubnets]).toBe(subnetId);
    expect(env[ENV.defaultSecurityGroups]).toBe(securityGroupId);
    expect(env[ENV.defaultLagGraceSeconds]).toBe('120');
    expect(resourcesOf('AWS::SNS::Subscription')[0][1].Properties).toMatchObject({ Protocol: 'email', Endpoint: 'ops@example.com' });
    // 120 s grace at 60 s periods: two consecutive periods of lag.
    const lagAlarm = resourcesOf('AWS::CloudWatch::Alarm').find(([id]) => id.includes('ServiceLagBeyondGrace'));
    expect(lagAlarm?.[1].Properties).toMatchObject({ EvaluationPeriods: 2, DatapointsToAlarm: 2 });
  });

  it('bundles the handler into an ESM asset with a source map', () => {
    const [, fn] = resourcesOf('AWS::Lambda::Function')[0];
    expect(fn.Properties.Handler).toBe('index.handler');
    const asset = readdirSync(outdir).find((f) => f.startsWith('asset.'));
    expect(asset).toBeDefined();
    const files = readdirSync(join(outdir, asset!)).sort();
    expect(files).toEqual(['index.mjs', 'index.mjs.map']);
    const code = readFileSync(join(outdir, asset!, 'index.mjs'), 'utf8');
    expect(code).toContain('createRequire');
  });

  it('the bundled handler runs a pass and emits exactly the metrics the alarms watch', async () => {
    // Prepare: table, cluster and one spec in moto; the function's environment from the template.
    const ddb = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint });
    await ddb.send(new CreateTableCommand(specsTableDefinition('specs')));
    const ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint });
    for (const clusterName of ['web', 'jobs']) await ecs.send(new CreateClusterCommand({ clusterName }));
    await ddb.send(
      new PutItemCommand({
        TableName: 'specs',
        Item: {
          cluster: { S: 'web' },
          service: { S: 'api' },
          image: { S: 'public.ecr.aws/nginx/nginx:1.27' },
          desiredCount: { N: '2' },
        },
      }),
    );
    const [, fn] = resourcesOf('AWS::Lambda::Function')[0];
    // The events queue, in moto under its logical id (moto's account is 123456789012).
    const sqs = new SQSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint });
    for (const [id] of resourcesOf('AWS::SQS::Queue')) await sqs.send(new CreateQueueCommand({ QueueName: id }));
    sqs.destroy();
    const env = resolveEnvironment((fn.Properties.Environment as { Variables: Json }).Variables, template.Resources, (id) => `${moto.endpoint}/123456789012/${id}`);
    const asset = readdirSync(outdir).find((f) => f.startsWith('asset.'))!;
    const bundle = join(outdir, asset, 'index.mjs');
    expect(existsSync(bundle)).toBe(true);
    const script = [
      `const { handler } = await import(${JSON.stringify(bundle)});`,
      `const context = { awsRequestId: 'test-request', getRemainingTimeInMillis: () => 40000 };`,
      `process.stdout.write('SUMMARY ' + JSON.stringify(await handler({}, context)) + '\\n');`,
    ].join('\n');

    // Act: the bundle on this Node (20), with the SDK pointed at moto.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: SYNTH_TIMEOUT_MS,
      env: {
        PATH: process.env.PATH,
        ...env,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ENDPOINT_URL: moto.endpoint,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });

    // Assess: the pass ran and created the service.
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/"level":"ERROR"|Error:/);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('{') || l.startsWith('SUMMARY '));
    const summary = JSON.parse(lines.find((l) => l.startsWith('SUMMARY '))!.slice('SUMMARY '.length));
    expect(summary).toMatchObject({ outcome: 'completed', counts: { actionsApplied: 2, actionsFailed: 0 } });
    // The bundle read the events queue; no rule feeds it here (no heartbeat), so the pass polled.
    expect(summary.events).toMatchObject({ mode: 'polling', received: 0 });
    expect(summary.events.reason).toMatch(/no heartbeat/);

    // Assess: EMF blobs in the namespace the alarms query, with the dimensions they group by.
    const emf = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Json).filter((o) => '_aws' in o);
    const namespace = env[ENV.metricsNamespace];
    const definitions = alarmDefinitions({ namespace, defaultLagGraceSeconds: 120, scheduleMinutes: 1 });
    const directives = (o: Json) => (o._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0];

    const lagQuery = definitions.find((d) => d.source.kind === 'metricsInsights')!.source as unknown as { groupBy: string[]; metricName: string };
    const lag = emf.find((o) => directives(o).Metrics.some((m) => m.Name === lagQuery.metricName));
    expect(lag).toBeDefined();
    expect(directives(lag!).Namespace).toBe(namespace);
    expect(directives(lag!).Dimensions).toEqual([lagQuery.groupBy]);
    // moto starts no tasks: the whole desired count lags.
    expect(lag).toMatchObject({ Cluster: 'web', Service: 'api', TaskLag: 2 });

    const watched = definitions.filter((d) => d.source.kind === 'reconcilerMetric').map((d) => (d.source as { metricName: string }).metricName);
    const pass = emf.find((o) => directives(o).Metrics.some((m) => m.Name === 'PassSucceeded'));
    expect(pass).toBeDefined();
    expect(directives(pass!).Namespace).toBe(namespace);
    // No dimensions (an empty set or none): the alarms watch the dimensionless series.
    expect(directives(pass!).Dimensions.flat()).toEqual([]);
    expect(directives(pass!).Metrics.map((m) => m.Name)).toEqual(expect.arrayContaining(watched));
    expect(pass).toMatchObject({ PassSucceeded: 1, ActionsFailed: 0, InvalidSpecs: 0 });
  });
});

describe('cdk.json feature flags', () => {
  it('pins every flag the installed aws-cdk-lib recommends for new projects, at its recommended value', () => {
    // The file `cdk init` copies into a new project's cdk.json.
    const recommended = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'aws-cdk-lib', 'recommended-feature-flags.json'), 'utf8')) as Record<string, unknown>;
    const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
    expect(Object.keys(recommended).length).toBeGreaterThan(50);
    const unpinned = Object.entries(recommended).filter(([flag, value]) => JSON.stringify(context[flag]) !== JSON.stringify(value)).map(([flag]) => flag);
    expect(unpinned).toEqual([]);
  });
});

describe('cdk synth with missing context', () => {
  it('names every missing value in one sentence, without a stack trace', () => {
    // Prepare
    const outdir = mkdtempSync(join(tmpdir(), 'ecsr-synth-'));
    try {
      // Act
      const r = cdk(['synth', '-q', '-c', 'clusters=web'], outdir);
      // Assess
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('missing -c subnets=');
      expect(r.stderr).toContain('missing -c securityGroups=');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('reconcilerPropsFromContext', () => {
  const from = (context: Record<string, unknown>) => reconcilerPropsFromContext((k) => context[k]);

  it.each([
    { case: 'nothing given', context: {}, names: ['clusters', 'createCluster'] },
    { case: 'clusters without network defaults', context: { clusters: 'web' }, names: ['subnets', 'securityGroups'] },
    { case: 'bad boolean', context: { createCluster: 'yes' }, names: ['createCluster'] },
    { case: 'bad number', context: { createCluster: 'true', maxDeletesPerPass: 'five' }, names: ['maxDeletesPerPass'] },
  ])('names what is missing or malformed: $case', ({ context, names }) => {
    let error: unknown;
    try {
      from(context);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ContextError);
    for (const n of names) expect((error as Error).message).toContain(n);
    expect((error as Error).message).toMatch(/^Cannot build the stack: .*\.$/);
  });

  it.each([
    {
      case: 'strings from -c',
      context: { clusters: 'web, jobs', subnets: 'subnet-1,subnet-2', securityGroups: 'sg-1', prune: 'false', scheduleMinutes: '5', lagGraceSeconds: '600' },
    },
    {
      case: 'JSON values from cdk.json',
      context: { clusters: ['web', 'jobs'], subnets: ['subnet-1', 'subnet-2'], securityGroups: ['sg-1'], prune: false, scheduleMinutes: 5, lagGraceSeconds: 600 },
    },
  ])('parses lists, booleans and numbers: $case', ({ context }) => {
    const props = from(context);
    expect(props.clusters).toEqual(['web', 'jobs']);
    expect(props.defaultSubnets).toEqual(['subnet-1', 'subnet-2']);
    expect(props.defaultSecurityGroups).toEqual(['sg-1']);
    expect(props.prune).toBe(false);
    expect(props.schedule?.toMinutes()).toBe(5);
    expect(props.defaultLagGrace).toBe(600);
  });

  it('needs nothing else for the quick start', () => {
    expect(from({ createCluster: 'true' })).toMatchObject({ createCluster: true, clusters: undefined });
  });
});

/**
 * Resolves the function's environment as CloudFormation would, for the intrinsics it uses:
 * `Ref` to the table (its name, here `specs`) and `Fn::GetAtt` role ARNs (a fixed account).
 */
function resolveEnvironment(variables: Json, resources: Record<string, { Type: string }>, queueUrl: (id: string) => string): Record<string, string> {
  const resolve = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const o = v as Json;
    if ('Ref' in o) {
      const type = resources[o.Ref as string]?.Type;
      if (type === 'AWS::DynamoDB::Table') return 'specs';
      if (type === 'AWS::SQS::Queue') return queueUrl(String(o.Ref));
      throw new Error(`unexpected Ref to ${String(o.Ref)} (${type})`);
    }
    if ('Fn::GetAtt' in o) {
      const [id, attr] = o['Fn::GetAtt'] as [string, string];
      if (resources[id]?.Type === 'AWS::IAM::Role' && attr === 'Arn') return `arn:aws:iam::123456789012:role/${id}`;
      throw new Error(`unexpected GetAtt ${id}.${attr}`);
    }
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(sep);
    }
    throw new Error(`unexpected intrinsic ${JSON.stringify(v)}`);
  };
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolve(v)]));
}
