/**
 * The published package as a CDK user gets it: `npm run build`, `npm pack`, the tarball installed
 * into a fresh CDK TypeScript app outside the repository (package.json, tsconfig.json and app
 * file shaped as `cdk init app --language typescript` writes them: CommonJS, `module` and
 * `moduleResolution` NodeNext, `tsc` then `node bin/<app>.js`), which composes `EcsReconciler`
 * with an existing VPC, cluster, table and topic and synthesizes with the prebuilt handler (no
 * bundler at synth); then the installed `ecsr --help` and `ecsr validate`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
/** Minutes on a busy 2-core machine (the build, npm install); generous, never a measure. */
const TIMEOUT_MS = 900_000;

const repoPackage = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string): Run {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  for (const k of Object.keys(env)) if (k.startsWith('AWS_') && k !== 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED') delete env[k];
  // The repository's own npm settings (npm_config_* from a parent `npm test`) stay out of the app.
  for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: TIMEOUT_MS });
  return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

function ok(r: Run, what: string): Run {
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  return r;
}

/** The app file: everything existing is imported by attribute, since synth here has no AWS account to look up. */
const APP_TS = `#!/usr/bin/env node
import * as cdk from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EcsReconciler, type EcsReconcilerProps } from 'ecs-reconciler';
import { parseSpecsYaml, type ServiceSpec } from 'ecs-reconciler/spec';

const env = { account: '123456789012', region: 'eu-west-1' };

class PlatformStack extends cdk.Stack {
  constructor(scope: cdk.App, id: string, props: cdk.StackProps) {
    super(scope, id, props);
    const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: 'vpc-0a1b2c3d',
      availabilityZones: ['eu-west-1a', 'eu-west-1b'],
      privateSubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
    });
    const cluster = ecs.Cluster.fromClusterAttributes(this, 'Cluster', { clusterName: 'web', vpc, securityGroups: [] });
    const table = dynamodb.Table.fromTableAttributes(this, 'Specs', {
      tableArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/platform-specs',
      tableStreamArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/platform-specs/stream/2026-01-01T00:00:00.000',
    });
    const topic = sns.Topic.fromTopicArn(this, 'OnCall', 'arn:aws:sns:eu-west-1:123456789012:on-call');
    const reconcilerProps: EcsReconcilerProps = {
      clusters: [cluster],
      defaultSubnets: vpc.privateSubnets,
      defaultSecurityGroups: [ec2.SecurityGroup.fromSecurityGroupId(this, 'Tasks', 'sg-0c3d4e5f')],
      existingTable: table,
      alarmTopic: topic,
    };
    new EcsReconciler(this, 'Reconciler', reconcilerProps);
  }
}

const parsed = parseSpecsYaml('cluster: web\\nservice: api\\nimage: public.ecr.aws/nginx/nginx:1.27\\ncpu: 256\\nmemory: 512\\n');
const result = parsed.docs[0]?.result;
const first: ServiceSpec | undefined = result?.ok ? result.spec : undefined;
if (result?.key?.service !== 'api' || (result.ok && first?.service !== 'api')) throw new Error('the spec entry did not read the spec');

// The CDK CLI passes CDK_OUTDIR; run with plain node, the app writes where the test reads.
const app = new cdk.App({ outdir: process.env.CDK_OUTDIR ?? 'cdk.out' });
new PlatformStack(app, 'Platform', { env });
app.synth();
`;

describe('the packed package in a fresh CDK TypeScript app', { timeout: TIMEOUT_MS }, () => {
  let work: string;
  let appDir: string;
  let tarball: string;
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> }> };

  beforeAll(() => {
    // Prepare: build and pack the repository, as `npm publish` would (`prepack` is the build).
    work = mkdtempSync(join(tmpdir(), 'ecsr-package-'));
    ok(run(NPM, ['run', 'build'], ROOT), 'npm run build');
    const packed = ok(run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT), 'npm pack');
    tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);

    // The app, as `cdk init app --language typescript` lays it out (jest left out).
    appDir = join(work, 'platform');
    mkdirSync(join(appDir, 'bin'), { recursive: true });
    writeFileSync(
      join(appDir, 'package.json'),
      `${JSON.stringify({ name: 'platform', version: '0.1.0', bin: { platform: 'bin/platform.js' }, scripts: { build: 'tsc', cdk: 'cdk' } }, null, 2)}\n`,
    );
    writeFileSync(
      join(appDir, 'tsconfig.json'),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['es2022'],
            declaration: true,
            strict: true,
            noImplicitAny: true,
            strictNullChecks: true,
            noImplicitThis: true,
            alwaysStrict: true,
            noImplicitReturns: true,
            inlineSourceMap: true,
            inlineSources: true,
            experimentalDecorators: true,
            strictPropertyInitialization: false,
            skipLibCheck: true,
            typeRoots: ['./node_modules/@types'],
            noEmitOnError: true,
            types: ['node'],
          },
          exclude: ['node_modules', 'cdk.out'],
        },
        null,
        2,
      )}\n`,
    );
    writeFileSync(join(appDir, 'cdk.json'), `${JSON.stringify({ app: 'npx tsc && node bin/platform.js' }, null, 2)}\n`);
    writeFileSync(join(appDir, 'bin', 'platform.ts'), APP_TS);
    copyFileSync(join(ROOT, 'examples', 'web.yaml'), join(appDir, 'web.yaml'));
    const dev = repoPackage.devDependencies;
    ok(
      run(
        NPM,
        [
          'install', '--prefer-offline', '--no-audit', '--no-fund',
          tarball,
          `aws-cdk-lib@${dev['aws-cdk-lib']}`,
          `constructs@${dev.constructs}`,
          `typescript@${dev.typescript}`,
          `@types/node@${dev['@types/node']}`,
        ],
        appDir,
      ),
      'npm install',
    );
  }, TIMEOUT_MS);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is installed outside the repository, from the tarball, with its peers once', () => {
    expect(appDir.startsWith(ROOT)).toBe(false);
    const installed = JSON.parse(readFileSync(join(appDir, 'node_modules', repoPackage.name, 'package.json'), 'utf8')) as { version: string };
    expect(installed.version).toBe(repoPackage.version);
    // No TypeScript sources shipped: the app gets JavaScript, declarations and the prebuilt handler.
    expect(existsSync(join(appDir, 'node_modules', repoPackage.name, 'lib'))).toBe(false);
    expect(existsSync(join(appDir, 'node_modules', repoPackage.name, 'lambda'))).toBe(false);
    expect(existsSync(join(appDir, 'node_modules', repoPackage.name, 'node_modules', 'aws-cdk-lib'))).toBe(false);
  });

  it('type-checks and compiles with the template tsconfig (NodeNext, CommonJS), then synthesizes', () => {
    // Act: what the template's cdk.json runs for `cdk synth`.
    ok(run(NPX, ['tsc'], appDir), 'tsc');
    ok(run(process.execPath, ['bin/platform.js'], appDir), 'synth');
    template = JSON.parse(readFileSync(join(appDir, 'cdk.out', 'Platform.template.json'), 'utf8'));

    // Assess: the function deploys the prebuilt handler directory as its asset.
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description?.toString().startsWith('ecs-reconciler'));
    expect(functions).toHaveLength(1);
    const fn = functions[0];
    expect(fn.Properties.Handler).toBe('index.handler');
    expect(fn.Properties.Runtime).toMatch(/^nodejs\d+\.x$/);
    const s3Key = String((fn.Properties.Code as { S3Key: unknown }).S3Key);
    const asset = join(appDir, 'cdk.out', `asset.${s3Key.replace(/\.zip$/, '')}`);
    expect(readdirSync(asset).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    expect(readFileSync(join(asset, 'index.mjs'))).toEqual(readFileSync(join(appDir, 'node_modules', repoPackage.name, 'dist', 'lib', 'handler', 'index.mjs')));
    // The existing table and topic are used, not created.
    expect(Object.values(template.Resources).filter((r) => r.Type === 'AWS::SNS::Topic')).toHaveLength(0);
    expect(JSON.stringify(template)).toContain('platform-specs');
    expect(JSON.stringify(template)).toContain('on-call');
  });

  it('loads from import as well as require', () => {
    const probe = [
      "import { EcsReconciler } from 'ecs-reconciler';",
      "import { parseSpecItem } from 'ecs-reconciler/spec';",
      "import { createRequire } from 'node:module';",
      'const cjs = createRequire(import.meta.url)("ecs-reconciler");',
      'console.log(typeof EcsReconciler, typeof parseSpecItem, typeof cjs.EcsReconciler);',
    ].join('\n');
    writeFileSync(join(appDir, 'probe.mjs'), probe);
    expect(ok(run(process.execPath, ['probe.mjs'], appDir), 'probe').stdout.trim()).toBe('function function function');
  });

  it('runs the installed ecsr: --help and validate', () => {
    const help = ok(run(NPX, ['--no-install', 'ecsr', '--help'], appDir), 'ecsr --help');
    expect(help.stdout).toContain('Usage: ecsr');
    expect(help.stdout).toContain('validate');
    const valid = ok(run(NPX, ['--no-install', 'ecsr', 'validate', '-f', 'web.yaml'], appDir), 'ecsr validate');
    expect(valid.stdout).toMatch(/valid/);
    writeFileSync(join(appDir, 'bad.yaml'), 'cluster: web\nservice: api\nimage: nginx\ncpu: 300\nmemory: 512\n');
    expect(run(NPX, ['--no-install', 'ecsr', 'validate', '-f', 'bad.yaml'], appDir).status).not.toBe(0);
  });
});
