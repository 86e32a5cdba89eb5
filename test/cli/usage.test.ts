/**
 * `ecsr` without AWS: `validate`, `--version`, the form of usage errors (commander's included),
 * and a reader that goes away (EPIPE). Each case runs the CLI in this process (EPIPE: in a child process);
 * AWS is pointed at a closed port with no region or credentials, so any AWS call would fail.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, ecsrIntoClosedPipe, REPO } from './run-cli';
import { ecsr } from '../support/cli-in-process';

/** No region, no credentials, every endpoint a closed port: an AWS call cannot succeed. */
const OFFLINE = baseEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_EC2_METADATA_DISABLED: 'true' });

const SPEC = (service: string, extra = '') => `cluster: shop\nservice: ${service}\nimage: public.ecr.aws/nginx/nginx:1.27\ndesiredCount: 2\n${extra}`;

describe('ecsr without AWS', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ecsr-usage-'));
    writeFileSync(join(dir, 'good.yaml'), `${SPEC('web')}---\n${SPEC('api')}`);
    // A valid spec, then a comment that takes the file one byte past 4 MiB.
    const head = `${SPEC('web')}#`;
    mkdirSync(join(dir, 'large'));
    writeFileSync(join(dir, 'large', 'huge.yaml'), `${head}${'x'.repeat(4 * 1024 * 1024 + 1 - head.length - 1)}\n`);
    writeFileSync(join(dir, 'bad.yaml'), `${SPEC('web')}---\n${SPEC('api', 'cpu: 300\nhealthCheck:\n  command: [CMD, x]\n  retries: 99\n')}`);
  });

  it.each([
    { case: 'valid specs in a file', args: (d: string) => ['-f', join(d, 'good.yaml')], input: undefined, code: 0, stdout: '2 specs valid\n', stderr: '' },
    { case: 'valid specs from stdin (-)', args: () => ['-f', '-'], input: `${SPEC('web')}`, code: 0, stdout: '1 spec valid\n', stderr: '' },
    { case: 'the web example of the deploy docs', args: () => ['-f', 'examples/web.yaml'], input: undefined, code: 0, stdout: '1 spec valid\n', stderr: '' },
    {
      case: 'invalid specs: one line per problem, at the attribute\'s line',
      args: (d: string) => ['-f', join(d, 'bad.yaml')],
      input: undefined,
      code: 1,
      stdout: (d: string) => `${join(d, 'bad.yaml')}:10: shop/api: cpu: must be one of 256, 512, 1024, 2048, 4096, 8192, 16384 (Fargate task CPU units, 1024 = 1 vCPU), got 300\n${join(d, 'bad.yaml')}:13: shop/api: healthCheck.retries: must be a whole number from 1 to 10 (ECS healthCheck.retries), got 99\n`,
      stderr: 'ecsr validate: 2 problems in the spec file.\n',
    },
    {
      case: 'a directory (repeatable -f): every file, each problem once',
      args: (d: string) => ['-f', d, '-f', join(d, 'good.yaml')],
      input: undefined,
      code: 1,
      stdout: /^[^\n]*\/bad\.yaml:10: shop\/api: cpu: [^\n]*\n[^\n]*\/bad\.yaml:13: shop\/api: healthCheck\.retries: [^\n]*\n[^\n]*\/good\.yaml:1: shop\/web: is also defined at [^\n]*\/bad\.yaml:1; a service has one spec\n$/,
      stderr: 'ecsr validate: 3 problems in the spec files.\n',
    },
    {
      case: 'an unknown tag: refused at its line, not read as the bare value',
      args: () => ['-f', '-'],
      input: 'cluster: shop\nservice: web\nimage: !Ref ImageParam\ndesiredCount: 2\n',
      code: 1,
      stdout: /^\(stdin\):3: YAML problem, document 1 not read: the tag !Ref is not one YAML knows[^\n]*\n$/,
      stderr: 'ecsr validate: 1 problem in the spec file.\n',
    },
    {
      case: 'a task definition over ECS\'s 64 KiB: the variable, the size and ECS\'s figure',
      args: () => ['-f', '-'],
      input: `${SPEC('web')}environment:\n  BIG: ${'x'.repeat(70_000)}\n`,
      code: 1,
      stdout: /^\(stdin\):6: shop\/web: environment\.BIG: makes the rendered task definition \d+ bytes [^\n]*ECS refuses a task definition over 65536 bytes \(64 KiB, Amazon ECS service quotas\)[^\n]*\n$/,
      stderr: 'ecsr validate: 1 problem in the spec file.\n',
    },
    {
      case: 'a file larger than a spec file may be: refused unread, with the limit',
      args: (d: string) => ['-f', join(d, 'large', 'huge.yaml')],
      input: undefined,
      code: 1,
      stdout: (d: string) =>
        `${join(d, 'large', 'huge.yaml')}: the file is ${4 * 1024 * 1024 + 1} bytes; a spec file may hold at most ${4 * 1024 * 1024} (4 MiB): ` +
        'split the specs over several files (ecsr apply -f DIR reads every *.yaml of a directory)\n',
      stderr: 'ecsr validate: 1 problem in the spec file.\n',
    },
    { case: 'a missing file', args: () => ['-f', '/nonexistent/specs.yaml'], input: undefined, code: 1, stdout: '', stderr: 'ecsr validate: Cannot read /nonexistent/specs.yaml: no such file.\n' },
  ])('validate: $case', async ({ args, input, code, stdout, stderr }) => {
    // Act
    const r = await ecsr(['validate', ...args(dir)], { env: OFFLINE, ...(input !== undefined ? { input } : {}) });

    // Assess
    expect(r.code).toBe(code);
    const out = typeof stdout === 'function' ? stdout(dir) : stdout;
    if (typeof out === 'string') expect(r.stdout).toBe(out);
    else expect(r.stdout).toMatch(out);
    if (typeof stderr === 'string') expect(r.stderr).toBe(stderr);
    else expect(r.stderr).toMatch(stderr);
  });

  // A YAML syntax error names the line of the mistake (where the quote or bracket
  // was opened, not where the parser noticed it), in one sentence, with no stack trace.
  it.each([
    {
      case: 'an unclosed double quote (yaml notices it at the end of the file)',
      text: `${SPEC('web')}---\ncluster: shop\nservice: api\nimage: "public.ecr.aws/nginx/nginx:1.27\ndesiredCount: 2\ncpu: 256\n`,
      line: 8,
      sentence: 'the " opened at column 8 is never closed (YAML read to the end of the file looking for it): end the value with ".',
    },
    {
      case: 'an unclosed [ (yaml notices it on the next line)',
      text: `${SPEC('web')}subnets: [subnet-0a1, subnet-0b2\nmemory: 512\n`,
      line: 5,
      sentence: 'the list opened with [ at column 10 is never closed: end it with ] (a [ ] list may span lines, each indented more than its key).',
    },
    {
      case: 'a duplicate key',
      text: `${SPEC('web')}desiredCount: 3\n`,
      line: 5,
      sentence: '`desiredCount` is given twice in the same mapping (first on line 4): keep one of them.',
    },
  ])('a YAML syntax error is one line at the mistake, for validate and apply: $case', async ({ text, line, sentence }) => {
    // Prepare
    const file = join(dir, 'syntax.yaml');
    writeFileSync(file, text);

    // Act
    const validate = await ecsr(['validate', '-f', file], { env: OFFLINE });
    const apply = await ecsr(['apply', '-f', file, '--table', 'specs'], { env: OFFLINE });

    // Assess: validate lists the problem on stdout; apply refuses before any AWS call.
    expect(validate).toEqual({ code: 1, stdout: `${file}:${line}: YAML syntax error: ${sentence}\n`, stderr: 'ecsr validate: 1 problem in the spec file.\n' });
    expect(apply).toEqual({
      code: 1,
      stdout: '',
      stderr: `ecsr apply: 1 problem in the spec file; nothing was written.\n  ${file}:${line}: YAML syntax error: ${sentence}\n`,
    });
  });

  it('the shared options may come before the command, as aws --endpoint-url URL ecs ... is written', async () => {
    // Prepare: credentials and a region, no endpoint but the one on the command line (a closed port).
    const env = baseEnv({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_EC2_METADATA_DISABLED: 'true' });

    // Act
    const r = await ecsr(['--endpoint-url=http://127.0.0.1:9', '--table', 'specs', 'get'], { env });

    // Assess: the endpoint was used (connection refused), not refused as an unknown option.
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ecsr get: Cannot connect to AWS (connection refused): check AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_ECS and your network.\n',
    });
  });

  it('--profile names the profile it could not find, and wins over credentials in the environment without the SDK warning about both', async () => {
    // Prepare: no config or credentials file; static credentials in the environment.
    const env = baseEnv({
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });

    // Act
    const r = await ecsr(['--profile', 'nope', 'get', '--table', 'specs', '--region', 'us-east-1'], { env });

    // Assess
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ecsr get: No AWS credentials were found for profile "nope": check that your AWS config or credentials file has it (aws configure list-profiles), or pass another --profile / AWS_PROFILE.\n',
    });
  });

  it('--version prints the version of package.json', async () => {
    // Prepare
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

    // Act
    const long = await ecsr(['--version'], { env: OFFLINE });
    const short = await ecsr(['-V'], { env: OFFLINE });

    // Assess
    expect(long).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(short).toEqual(long);
  });

  it.each([
    { case: 'an unknown command', args: ['aply'], stderr: "ecsr: Unknown command 'aply' (did you mean apply?).\n(see ecsr --help)\n" },
    { case: 'an unknown option', args: ['apply', '-f', 'x.yaml', '--tabel', 't'], stderr: "ecsr apply: Unknown option '--tabel' (did you mean --table?).\n(see ecsr apply --help)\n" },
    {
      case: 'an invalid command argument',
      args: ['delete', 'api'],
      stderr: 'ecsr delete: Invalid cluster/service: "api" is not CLUSTER/SERVICE (ECS names: letters, digits, - and _).\n(see ecsr delete --help)\n',
    },
    { case: 'an invalid option value', args: ['get', '-o', 'xml'], stderr: "ecsr get: Invalid --output 'xml': allowed choices are table, wide, json, yaml.\n(see ecsr get --help)\n" },
    { case: 'a missing required option', args: ['validate'], stderr: "ecsr validate: Required option '-f, --file <path>' not specified.\n(see ecsr validate --help)\n" },
    { case: 'too many arguments', args: ['get', 'a', 'b'], stderr: "ecsr get: Too many arguments for 'get'; expected 1 argument but got 2.\n(see ecsr get --help)\n" },
    {
      case: 'the scenario without the shop (no stray "Error:")',
      args: ['local', '--specs', 'examples/web.yaml'],
      stderr: /^ecsr local: The scenario needs the example shop, but shop\/web, shop\/worker, shop\/thumbnails, shop\/ledger are not among the specs/,
    },
    {
      case: 'options the fan-out would ignore (--targets with --report, --speed, --forever, --plain)',
      args: ['local', '--targets', '2', '--report', 'run.html', '--speed', '100', '--forever', '--plain', '--seed', '3'],
      stderr:
        'ecsr local: --speed, --forever, --plain, --report cannot be used with --targets: the fan-out runs its own simulated clock, free ports, table and plain output, without a report (it takes --specs, --seed and --no-events).\n',
    },
    {
      case: 'a fixed port or table with the fan-out',
      args: ['local', '--targets', '3', '--ecs-port', '4100', '--table', 'other'],
      stderr: /^ecsr local: --ecs-port, --table cannot be used with --targets: /,
    },
  ])('errors are "ecsr <command>: <one sentence>", exit code 1: $case', async ({ args, stderr }) => {
    // Act
    const r = await ecsr(args, { env: OFFLINE });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    if (typeof stderr === 'string') expect(r.stderr).toBe(stderr);
    else expect(r.stderr).toMatch(stderr);
    expect(r.stderr).not.toMatch(/^error:|Error:|\n\s+at /m);
  });

  it('ecsr sim on a port in use: ecsr sim: <sentence>', async () => {
    // Prepare
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;

    // Act
    const r = await ecsr(['sim', '--port', String(port)], { env: OFFLINE }).finally(() => server.close());

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ecsr sim: Port ${port} is already in use on 127.0.0.1; choose another with --port (0 picks a free one).\n`);
  });

  it.each([
    { case: 'validate', args: () => ['validate', '-f', 'examples/shop.yaml'], code: 0 },
    { case: 'the local scenario, which writes many lines', args: () => ['local', '--speed', '1000000'], code: 0 },
    { case: 'validate with problems keeps its failure code', args: (d: string) => ['validate', '-f', join(d, 'bad.yaml')], code: 1 },
  ])('a reader that goes away (EPIPE) ends the command quietly: $case', async ({ args, code }) => {
    // Act
    const r = await ecsrIntoClosedPipe(args(dir), { env: baseEnv(), timeoutMs: 120_000 });

    // Assess
    expect(r.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.code).toBe(code);
  });
});
