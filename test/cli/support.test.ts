/**
 * The pure parts of `ecsr`: durations and references, error sentences, the `--wait` verdict, the
 * spec attribute diff and the export format.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambda/config';
import { AwsCallError } from '../../lambda/adapters/errors';
import { parseSpecItem, parseSpecsYaml } from '../../lambda/core/spec';
import type { Condition, ServiceStatus } from '../../lambda/core/types';
import { specChanges } from '../../bin/commands/diff';
import { exportYaml } from '../../bin/commands/export';
import { CliError, describeError } from '../../bin/commands/support/errors';
import { colorPhase, fitRows, formatAction, shorten } from '../../bin/commands/support/format';
import { formatDuration, parseDuration, parseInteger, parsePort, parsePositive, parseServiceRef } from '../../bin/commands/support/options';
import { readSpecFiles } from '../../bin/commands/support/spec-file';
import { usageSentence } from '../../bin/commands/support/usage-errors';
import { validationReport } from '../../bin/commands/validate';
import type { TableEntry } from '../../bin/commands/support/spec-table';
import { failureSentence, verdictOf, type WaitTarget } from '../../bin/commands/support/wait';

const T = '2025-06-01T12:00:00.000Z';

function sdkError(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 }, ...extra });
}

function condition(type: string, status: Condition['status'], reason: string): Condition {
  return { type, status, reason, message: reason, lastTransitionTime: T };
}

function aStatus(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  return {
    phase: 'Converged',
    conditions: [condition('Ready', 'True', 'ServiceConverged'), condition('Progressing', 'False', 'ServiceConverged')],
    specHash: 'h1',
    lastAppliedSpecHash: 'h1',
    appliedRolloutState: 'COMPLETED',
    desiredCount: 2,
    runningCount: 2,
    pendingCount: 0,
    lagBeyondGrace: false,
    observedAt: T,
    ...overrides,
  };
}

const PRESENT: WaitTarget = { key: { cluster: 'shop', service: 'web' }, hash: 'h1', state: 'present' };
const ABSENT: WaitTarget = { ...PRESENT, state: 'absent' };

describe('ecsr support', () => {
  it.each([
    { text: '90s', seconds: 90 },
    { text: '10m', seconds: 600 },
    { text: '1h30m', seconds: 5400 },
    { text: '2m30s', seconds: 150 },
    { text: '500ms', seconds: 0.5 },
    { text: '45', seconds: 45 },
    { text: '1d', seconds: 86_400 },
  ])('parseDuration("$text") = $seconds s', ({ text, seconds }) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', '10x', 'm', '1h 30m', '-5s', 'ten minutes'])('parseDuration rejects "%s"', (text) => {
    expect(() => parseDuration(text)).toThrow(InvalidArgumentError);
  });

  it.each([
    { seconds: 42, text: '42s' },
    { seconds: 600, text: '10m' },
    { seconds: 5430, text: '1h30m30s' },
  ])('formatDuration($seconds) = $text', ({ seconds, text }) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('parses ports, positive numbers and whole numbers, and rejects anything else', () => {
    expect([parsePort('0'), parsePort('4100'), parsePort('65535')]).toEqual([0, 4100, 65535]);
    for (const bad of ['-1', '65536', '1.5', 'x']) expect(() => parsePort(bad)).toThrow(InvalidArgumentError);
    expect([parsePositive('60'), parsePositive('0.5')]).toEqual([60, 0.5]);
    for (const bad of ['0', '-1', 'Infinity', 'x']) expect(() => parsePositive(bad)).toThrow(InvalidArgumentError);
    expect([parseInteger('7'), parseInteger('-3')]).toEqual([7, -3]);
    for (const bad of ['1.5', 'x']) expect(() => parseInteger(bad)).toThrow(InvalidArgumentError);
  });

  it('parses CLUSTER/SERVICE and rejects anything else', () => {
    expect(parseServiceRef('shop/web')).toEqual({ cluster: 'shop', service: 'web' });
    for (const bad of ['shop', 'shop/web/x', '/web', 'shop/', 'sh op/web']) expect(() => parseServiceRef(bad)).toThrow(InvalidArgumentError);
  });

  it.each([
    { case: 'a CliError as is', err: new CliError('Fix the file.'), sentence: 'Fix the file.' },
    {
      case: 'a configuration error',
      err: new ConfigError('Invalid configuration: PRUNE must be one of true, false', ['PRUNE']),
      sentence: 'Invalid configuration: PRUNE must be one of true, false.',
    },
    {
      case: 'a refused connection inside the SDK error',
      err: Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) }),
      sentence: /^Cannot connect to AWS \(connection refused\): check AWS_ENDPOINT_URL/,
    },
    { case: 'no region', err: new Error('Region is missing'), sentence: /^No AWS region is configured: pass --region, set AWS_REGION/ },
    {
      case: 'no credentials',
      err: sdkError('CredentialsProviderError', 'Could not load credentials from any providers'),
      sentence: /^No AWS credentials were found: pass --profile/,
    },
    {
      case: 'rejected credentials',
      err: sdkError('UnrecognizedClientException', 'The security token included in the request is invalid.'),
      sentence: 'AWS rejected the credentials (UnrecognizedClientException): The security token included in the request is invalid.',
    },
    {
      case: 'access denied',
      err: sdkError('AccessDeniedException', 'User: arn:aws:iam::1:user/x is not authorized to perform: dynamodb:Scan'),
      sentence: 'Access denied: User: arn:aws:iam::1:user/x is not authorized to perform: dynamodb:Scan.',
    },
    {
      case: 'a plain Error: its message alone, without a stray "Error:"',
      err: new Error('The scenario needs the example shop, but shop/web is not among the specs'),
      sentence: 'The scenario needs the example shop, but shop/web is not among the specs.',
    },
    {
      case: 'a wrapped AWS call',
      err: new AwsCallError('DynamoDB Scan specs', sdkError('ValidationException', 'bad request\nwith a second line')),
      sentence: 'DynamoDB Scan specs failed: ValidationException: bad request.',
    },
  ])('describeError: $case', ({ err, sentence }) => {
    // Act
    const text = describeError(err);

    // Assess
    if (typeof sentence === 'string') expect(text).toBe(sentence);
    else expect(text).toMatch(sentence);
    expect(text).not.toContain('\n');
  });

  it.each([
    { case: 'no status yet', target: PRESENT, status: undefined, verdict: 'waiting' },
    { case: 'a status of an older spec', target: PRESENT, status: aStatus({ specHash: 'h0' }), verdict: 'waiting' },
    { case: 'converged on the spec', target: PRESENT, status: aStatus(), verdict: 'done' },
    { case: 'running below desired', target: PRESENT, status: aStatus({ phase: 'Progressing', runningCount: 1 }), verdict: 'waiting' },
    { case: 'rollout still in progress', target: PRESENT, status: aStatus({ appliedRolloutState: 'IN_PROGRESS' }), verdict: 'waiting' },
    { case: 'converged on an older applied spec', target: PRESENT, status: aStatus({ lastAppliedSpecHash: 'h0' }), verdict: 'waiting' },
    { case: 'the rollout of this spec failed', target: PRESENT, status: aStatus({ phase: 'Degraded', failedSpecHash: 'h1' }), verdict: 'failed' },
    { case: 'blocked', target: PRESENT, status: aStatus({ phase: 'Blocked' }), verdict: 'failed' },
    { case: 'lagging beyond grace (may still recover)', target: PRESENT, status: aStatus({ phase: 'Degraded', runningCount: 0, lagBeyondGrace: true }), verdict: 'waiting' },
    { case: 'absent and deleted', target: ABSENT, status: aStatus({ phase: 'Deleted' }), verdict: 'done' },
    { case: 'absent and still deleting', target: ABSENT, status: aStatus({ phase: 'Deleting' }), verdict: 'waiting' },
  ])('wait verdict: $case -> $verdict', ({ target, status, verdict }) => {
    expect(verdictOf(target, status)).toBe(verdict);
  });

  it('gives each reason a service cannot converge its own first sentence and next step', () => {
    // Prepare: one status per reason
    const blockedBy = (reason: string, message: string) =>
      aStatus({ phase: 'Blocked', conditions: [{ type: 'Blocked', status: 'True', reason, message, lastTransitionTime: 't' }] } as Partial<ServiceStatus>);
    const cases = {
      ClusterNotFound: blockedBy('ClusterNotFound', 'cluster shop does not exist'),
      NotOwned: blockedBy('NotOwned', 'service web exists without the owner tag'),
      NotAllowed: blockedBy('NotAllowed', 'image registry docker.io is not in ALLOWED_IMAGE_REGISTRIES'),
      NoSubnets: blockedBy('NoSubnets', 'no subnets'),
      SpecInvalid: aStatus({ phase: 'Invalid' }),
      RolloutFailed: aStatus({ phase: 'Degraded', failedSpecHash: 'h1' }),
    };

    // Act
    const sentences = Object.fromEntries(Object.entries(cases).map(([k, status]) => [k, failureSentence(PRESENT, status)]));

    // Assess: distinct first sentences, each with the step that fits it
    const firsts = Object.values(sentences).map((s) => s.split('. ')[0]);
    expect(new Set(firsts).size).toBe(firsts.length);
    expect(sentences.ClusterNotFound).toMatch(/^Cluster shop does not exist.*aws ecs create-cluster --cluster-name shop/);
    expect(sentences.NotOwned).toMatch(/owner tag.*set `adopt: true`/);
    expect(sentences.NotAllowed).toMatch(/refuses shop\/web: image registry docker\.io .*add it to the allow-list/);
    expect(sentences.NoSubnets).toMatch(/Set `subnets` in the spec, or DEFAULT_SUBNETS/);
    expect(sentences.SpecInvalid).toMatch(/is invalid.*Fix the attributes/);
    expect(sentences.RolloutFailed).toMatch(/^The rollout of shop\/web failed.*change the spec/);
  });

  it('lists attribute changes from the table to the file, by path', () => {
    expect(
      specChanges(
        { image: 'a:1', desiredCount: 2, environment: { A: '1', B: '2' }, subnets: ['s1'] },
        { image: 'a:2', desiredCount: 2, environment: { A: '1', C: '3' } },
      ),
    ).toEqual(['environment.B "2" -> (none)', 'environment.C (none) -> "3"', 'image "a:1" -> "a:2"', 'subnets ["s1"] -> (none)']);
    expect(specChanges({ image: 'a:1' }, { image: 'a:1' })).toEqual([]);
  });

  it('exports valid specs in normalized form and invalid items with their problems as comments', () => {
    // Prepare
    const valid = parseSpecItem({ cluster: 'shop', service: 'web', image: 'nginx:1', desiredCount: 2, subnets: ['subnet-0b1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60001'] });
    const invalidItem = { cluster: 'shop', service: 'bad', image: 'nginx:1', desiredCount: 1, cpu: 3 };
    const invalid = parseSpecItem(invalidItem);
    const entries: TableEntry[] = [
      { key: { cluster: 'shop', service: 'bad' }, item: invalidItem, result: invalid },
      { key: { cluster: 'shop', service: 'web' }, item: {}, result: valid },
    ];

    // Act
    const text = exportYaml(entries);

    // Assess
    expect(text).toMatch(/^---\n# shop\/bad: INVALID, exported as stored; apply rejects it until fixed:\n# +cpu: must be one of 256/);
    const docs = parseSpecsYaml(text).docs;
    expect(docs.map((d) => d.result.ok)).toEqual([false, true]);
    expect(docs[1].result.ok && valid.ok && docs[1].result.hash).toBe(valid.ok ? valid.hash : 'x');
    expect(docs[1].item?.subnets).toEqual(['subnet-0a1b2c3d4e5f60001', 'subnet-0b1b2c3d4e5f60001']);
  });

  it.each([
    { case: 'unknown command, with the suggestion', message: "error: unknown command 'aply'\n(Did you mean apply?)\n", sentence: "Unknown command 'aply' (did you mean apply?)." },
    { case: 'unknown option', message: "error: unknown option '--nope'\n", sentence: "Unknown option '--nope'." },
    {
      case: 'invalid option value: the parser names the value',
      message: 'error: option \'--timeout <duration>\' argument \'10x\' is invalid. "10x" is not a duration; use e.g. 90s, 10m, 1h30m.\n',
      sentence: 'Invalid --timeout: "10x" is not a duration; use e.g. 90s, 10m, 1h30m.',
    },
    {
      case: 'invalid choice: the value is named',
      message: "error: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, yaml.\n",
      sentence: "Invalid --output 'xml': allowed choices are table, json, yaml.",
    },
    {
      case: 'invalid command argument',
      message: 'error: command-argument value \'api\' is invalid for argument \'cluster/service\'. "api" is not CLUSTER/SERVICE (ECS names: letters, digits, - and _).\n',
      sentence: 'Invalid cluster/service: "api" is not CLUSTER/SERVICE (ECS names: letters, digits, - and _).',
    },
    { case: 'two sentences become one', message: "error: too many arguments for 'get'. Expected 1 argument but got 2.\n", sentence: "Too many arguments for 'get'; expected 1 argument but got 2." },
    { case: 'missing mandatory option', message: "error: required option '-f, --file <path>' not specified\n", sentence: "Required option '-f, --file <path>' not specified." },
  ])('usageSentence: $case', ({ message, sentence }) => {
    expect(usageSentence(message)).toBe(sentence);
  });

  const SPEC = 'cluster: shop\nservice: web\nimage: nginx:1\ndesiredCount: 2\n';
  it.each([
    { case: 'a top-level attribute: its own line', text: `${SPEC}cpu: 300\n`, problem: /^f\.yaml:5: shop\/web: cpu: must be one of/ },
    { case: 'a nested key', text: `${SPEC}healthCheck:\n  command: [CMD, x]\n  retries: 99\n`, problem: /^f\.yaml:7: shop\/web: healthCheck\.retries: / },
    { case: 'a name with a dot (longest key wins)', text: `${SPEC}environment:\n  OK: "1"\n  A.B: "2"\n`, problem: /^f\.yaml:7: shop\/web: environment\.A\.B: name must/ },
    { case: 'a list item of a block list', text: `${SPEC}command:\n  - run\n  - 1\n`, problem: /^f\.yaml:7: shop\/web: command\[1\]: must be a string/ },
    { case: 'a missing attribute: the spec\'s first line', text: `---\n# comment\ncluster: shop\nservice: web\nimage: nginx:1\n`, problem: /^f\.yaml:3: shop\/web: desiredCount: is required/ },
    { case: 'an unknown attribute', text: `${SPEC}desiredcount: 2\n`, problem: /^f\.yaml:5: shop\/web: desiredcount: is not a spec attribute; did you mean "desiredCount"\?/ },
    {
      case: 'the second spec of a flow list on one line',
      text: '- {cluster: a, service: x, image: i, desiredCount: 1}\n- {cluster: a, service: y, image: i, desiredCount: 1, cpu: 3}\n',
      problem: /^f\.yaml:2: a\/y: cpu: /,
    },
    {
      case: 'an attribute from a merge key: the spec\'s first line',
      text: '- &b {cluster: s, service: a, image: i, desiredCount: 1, cpu: 3}\n- <<: *b\n  service: b\n',
      problem: /^f\.yaml:2: s\/b: cpu: /,
    },
  ])('spec file problems are reported at the attribute\'s line: $case', ({ text, problem }) => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ecsr-lines-'));
    writeFileSync(join(dir, 'f.yaml'), text);

    // Act
    const found = readSpecFiles([join(dir, 'f.yaml')]);

    // Assess
    const problems = found.problems.map((p) => p.slice(dir.length + 1));
    expect(problems.some((p) => problem.test(p))).toBe(true);
    expect(validationReport(found)).toBe(found.problems.map((p) => `${p}\n`).join(''));
  });

  it.each([
    { case: 'one spec', specs: 1, report: '1 spec valid\n' },
    { case: 'several specs', specs: 3, report: '3 specs valid\n' },
  ])('validationReport without problems: $case', ({ specs, report }) => {
    expect(validationReport({ specs: Array.from({ length: specs }, () => ({})), problems: [] })).toBe(report);
  });

  it('formats an action line: its changes, else its reason, and the outcome when not applied', () => {
    const update = { type: 'UpdateService', cluster: 'shop', service: 'worker', reason: 'drift', kind: 'drift' } as const;
    const changes = [
      { field: 'desiredCount', from: '6', to: '2' },
      { field: 'image', from: 'a:1', to: 'a:2' },
    ];
    expect(formatAction({ ...update, changes, outcome: 'applied' })).toBe('UpdateService (drift) shop/worker: desiredCount 6 -> 2, image a:1 -> a:2');
    expect(formatAction({ type: 'CreateService', cluster: 'shop', service: 'web', reason: 'no such service', outcome: 'planned' })).toBe(
      'CreateService shop/web: no such service',
    );
    expect(formatAction({ ...update, changes, outcome: 'failed', errorClass: 'throttled', message: 'Rate exceeded' })).toBe(
      'UpdateService (drift) shop/worker: desiredCount 6 -> 2, image a:1 -> a:2 [FAILED throttled: Rate exceeded]',
    );
    expect(formatAction({ ...update, outcome: 'skipped', message: 'out of time' })).toBe('UpdateService (drift) shop/worker: drift [skipped: out of time]');
  });

  it('shortens text to one line with an ellipsis, and colours phases by urgency', () => {
    expect(shorten('  a\n  b  ', 10)).toBe('a b');
    expect(shorten('abcdefghij', 5)).toBe('abcd…');
    expect(shorten('abcdefghij', 10)).toBe('abcdefghij');
    const tags = { green: (s: string) => `<g>${s}`, red: (s: string) => `<r>${s}`, yellow: (s: string) => `<y>${s}` } as unknown as Parameters<typeof colorPhase>[1];
    expect(['Converged', 'Deleted', 'Degraded', 'Invalid', 'Blocked', 'Progressing', 'Pending'].map((p) => colorPhase(p, tags))).toEqual([
      '<g>Converged',
      '<g>Deleted',
      '<r>Degraded',
      '<r>Invalid',
      '<r>Blocked',
      '<y>Progressing',
      '<y>Pending',
    ]);
  });
});

describe('fitRows (get --watch on a terminal)', () => {
  const frame = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

  it('keeps the first lines of a frame taller than the terminal and says how many were left out', () => {
    const out = fitRows(frame, 24);
    const lines = out.replace(/\n$/, '').split('\n');
    // 23 rows at most: one stays free for the cursor, so the header never scrolls away.
    expect(lines).toHaveLength(23);
    expect(lines[0]).toBe('line 1');
    expect(lines[21]).toBe('line 22');
    expect(lines[22]).toBe('… 8 more lines: a taller terminal shows them (ecsr get prints everything)');
  });

  it('leaves a frame that fits, or an unknown terminal height, as it is', () => {
    expect(fitRows(frame, 31)).toBe(frame);
    expect(fitRows(frame, undefined)).toBe(frame);
    expect(fitRows(frame, 0)).toBe(frame);
  });
});
