import { readFileSync } from 'node:fs';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import fc from 'fast-check';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { desiredServiceConfig } from '../lambda/core/plan-service';
import { parseSpecItem, parseSpecsYaml, specToItem } from '../lambda/core/spec';
import { MAX_SPEC_FILE_BYTES } from '../lambda/core/spec-yaml';
import { renderTaskDefinition } from '../lambda/core/taskdef';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../local/embedded-dynamodb';

/** Lines joined with newlines, so that line numbers in a test can be read off the array. */
const lines = (...ls: string[]) => `${ls.join('\n')}\n`;

const okSpecs = (text: string) => parseSpecsYaml(text).docs.map((d) => (d.result.ok ? `${d.result.key.cluster}/${d.result.key.service}` : 'invalid'));

describe('parseSpecsYaml', () => {
  it('reads one spec per document, with the line each starts on', () => {
    // Prepare
    const text = lines(
      '# yaml-language-server: $schema=../schema/service-spec.schema.json', // 1
      'cluster: prod', // 2
      'service: web', // 3
      'image: nginx:1.27', // 4
      'desiredCount: 2', // 5
      '---', // 6
      'cluster: prod', // 7
      'service: api', // 8
      'image: nginx:1.27', // 9
      'desiredCount: 1', // 10
      '---', // 11
      '# a comment first', // 12
      'cluster: prod', // 13
      'service: old', // 14
      'state: absent', // 15
    );
    // Act
    const { docs, errors } = parseSpecsYaml(text, 'specs.yaml');
    // Assess
    expect(errors).toEqual([]);
    expect(docs.map((d) => [d.index, d.line, d.result.ok])).toEqual([
      [0, 2, true],
      [1, 7, true],
      [2, 13, true],
    ]);
    expect(docs[2].result).toMatchObject({ ok: true, spec: { state: 'absent', image: '' } });
  });

  it('reads a top-level list of specs, with the line of each item', () => {
    const text = lines(
      '- cluster: prod', // 1
      '  service: web', // 2
      '  image: nginx', // 3
      '  desiredCount: 2', // 4
      '', // 5
      '- cluster: prod', // 6
      '  service: api', // 7
      '  image: nginx', // 8
      '  desiredCount: 1', // 9
    );
    const { docs, errors } = parseSpecsYaml(text);
    expect(errors).toEqual([]);
    expect(docs.map((d) => [d.index, d.line])).toEqual([
      [0, 1],
      [1, 6],
    ]);
    expect(okSpecs(text)).toEqual(['prod/web', 'prod/api']);
  });

  it('numbers specs across lists and documents in file order', () => {
    const text = lines(
      '- {cluster: a, service: one, image: nginx, desiredCount: 1}', // 1
      '- {cluster: a, service: two, image: nginx, desiredCount: 1}', // 2
      '---', // 3
      'cluster: b', // 4
      'service: three', // 5
      'image: nginx', // 6
      'desiredCount: 1', // 7
    );
    const { docs } = parseSpecsYaml(text);
    expect(docs.map((d) => [d.index, d.line])).toEqual([
      [0, 1],
      [1, 2],
      [2, 4],
    ]);
    expect(okSpecs(text)).toEqual(['a/one', 'a/two', 'b/three']);
  });

  it('returns the item as plain JS next to the parse result', () => {
    const text = lines('cluster: prod', 'service: web', 'image: nginx', 'desiredCount: 2', 'environment:', '  PORT: "8080"', 'subnets: [subnet-0a1b2c3d]');
    const [doc] = parseSpecsYaml(text).docs;
    expect(doc.item).toEqual({
      cluster: 'prod',
      service: 'web',
      image: 'nginx',
      desiredCount: 2,
      environment: { PORT: '8080' },
      subnets: ['subnet-0a1b2c3d'],
    });
    expect(doc.result).toEqual(parseSpecItem(doc.item!));
  });

  it('reports an invalid spec with the line of its document and the attribute paths', () => {
    const text = lines(
      'cluster: prod', // 1
      'service: web', // 2
      'image: nginx', // 3
      'desiredCount: 2', // 4
      '---', // 5
      'cluster: prod', // 6
      'service: api', // 7
      'image: nginx', // 8
      'desiredCount: "3"', // 9
      'healthCheck:', // 10
      '  command: [CMD-SHELL, "curl -f localhost"]', // 11
      '  retries: 11', // 12
    );
    const { docs, errors } = parseSpecsYaml(text);
    expect(errors).toEqual([]);
    expect(docs[1].line).toBe(6);
    expect(docs[1].result.ok).toBe(false);
    if (!docs[1].result.ok) {
      expect(docs[1].result.key).toEqual({ cluster: 'prod', service: 'api' });
      expect(docs[1].result.errors.map((e) => [e.path, e.message])).toEqual([
        ['desiredCount', 'must be a number (DynamoDB type N), got string "3"'],
        ['healthCheck.retries', 'must be a whole number from 1 to 10 (ECS healthCheck.retries), got 11'],
      ]);
    }
  });

  it.each([
    { case: 'yes is a string in YAML 1.2', value: 'adopt: yes', path: 'adopt', message: 'must be a boolean (DynamoDB type BOOL), got string "yes"' },
    { case: 'a quoted number is a string', value: 'containerPort: "80"', path: 'containerPort', message: 'must be a number (DynamoDB type N), got string "80"' },
    { case: 'an empty value is null', value: 'subnets:', path: 'subnets', message: 'must be a list (DynamoDB type L), got null (remove the attribute to leave it unset)' },
  ])('keeps YAML types as written: $case', ({ value, path, message }) => {
    const [doc] = parseSpecsYaml(lines('cluster: prod', 'service: web', 'image: nginx', 'desiredCount: 2', value)).docs;
    expect(doc.result).toMatchObject({ ok: false, errors: [{ path, message }] });
  });

  it('honours merge keys, so specs can share settings', () => {
    const text = lines(
      'x-common: &common',
      '  cluster: prod',
      '  image: nginx',
      '  desiredCount: 2',
      '---',
      '- <<: *common',
      '  service: web',
    );
    // The first document defines the anchor only within itself; an alias across documents is an error.
    const inOneDoc = lines(
      '- &web',
      '  cluster: prod',
      '  service: web',
      '  image: nginx',
      '  desiredCount: 2',
      '- <<: *web',
      '  service: api',
      '  desiredCount: 5',
    );
    expect(parseSpecsYaml(text).errors.length).toBeGreaterThan(0);
    const { docs, errors } = parseSpecsYaml(inOneDoc);
    expect(errors).toEqual([]);
    expect(docs[1].result).toMatchObject({ ok: true, spec: { cluster: 'prod', service: 'api', image: 'nginx', desiredCount: 5 } });
  });

  it('reports a syntax error with its line and still reads the other documents', () => {
    const text = lines(
      'cluster: prod', // 1
      'service: web', // 2
      'image: nginx', // 3
      'desiredCount: 2', // 4
      '---', // 5
      'cluster: prod', // 6
      'service: [web', // 7  unterminated flow sequence
      'image: nginx', // 8
      '---', // 9
      'cluster: prod', // 10
      'service: api', // 11
      'image: nginx', // 12
      'desiredCount: 1', // 13
    );
    const { docs, errors } = parseSpecsYaml(text, 'specs.yaml');
    expect(docs.map((d) => d.line)).toEqual([1, 10]);
    // One error, on the line where the [ was opened (yaml itself notices it on line 8).
    expect(errors).toEqual([
      {
        file: 'specs.yaml',
        line: 7,
        message: 'YAML syntax error: the list opened with [ at column 10 is never closed: end it with ] (a [ ] list may span lines, each indented more than its key).',
      },
    ]);
  });

  // The line where the mistake is, in the user's words; one sentence per document.
  it.each([
    {
      case: 'an unclosed flow sequence (yaml notices it on the next line)',
      text: lines('cluster: prod', 'service: web', 'subnets: [subnet-1, subnet-2', 'desiredCount: 2', 'cpu: 256'),
      line: 3,
      message: 'the list opened with [ at column 10 is never closed: end it with ] (a [ ] list may span lines, each indented more than its key).',
    },
    {
      case: 'an unclosed flow sequence on the last line',
      text: lines('cluster: prod', 'service: web', 'subnets: [subnet-1'),
      line: 3,
      message: /^the list opened with \[ at column 10 is never closed/,
    },
    {
      case: 'an unclosed flow sequence spanning lines',
      text: lines('- cluster: prod', '  service: web', '  subnets: [subnet-1,', '    subnet-2', '  desiredCount: 2'),
      line: 3,
      message: /^the list opened with \[ at column 12 is never closed/,
    },
    {
      case: 'an unclosed flow map',
      text: lines('cluster: prod', 'service: web', 'environment: {A: "1", B: "2"', 'desiredCount: 2'),
      line: 3,
      message: 'the mapping opened with { at column 14 is never closed: end it with } (a { } mapping may span lines, each indented more than its key).',
    },
    {
      case: 'a flow map closed with ]',
      text: lines('cluster: prod', 'service: web', 'containers: [{name: app, image: nginx]'),
      line: 3,
      message: 'the mapping opened with { at column 14 ends with ] on line 3: close it with }.',
    },
    {
      case: 'a ] that closes nothing',
      text: lines('cluster: prod', 'service: web', 'subnets: [subnet-1]]'),
      line: 3,
      message: 'the ] at column 20 closes no [: remove it, or add the [ it belongs to.',
    },
    {
      case: 'an unclosed double quote (yaml notices it at the end of the file)',
      text: lines('cluster: prod', 'service: web', 'image: "nginx:1.27', 'desiredCount: 2', 'cpu: 256', 'memory: 512'),
      line: 3,
      message: 'the " opened at column 8 is never closed (YAML read to the end of the file looking for it): end the value with ".',
    },
    {
      case: 'an unclosed double quote in a nested mapping',
      text: lines('cluster: prod', 'service: web', 'environment:', '  A: "x', '  B: y'),
      line: 4,
      message: /^the " opened at column 6 is never closed/,
    },
    {
      case: 'an unclosed single quote',
      text: lines('cluster: prod', 'service: web', "image: 'nginx:1.27", 'desiredCount: 2'),
      line: 3,
      message: "the ' opened at column 8 is never closed (YAML read to the end of the file looking for it): end the value with '.",
    },
    {
      case: "an unclosed single quote holding an escaped ''",
      text: lines('cluster: prod', "service: 'it''s", 'desiredCount: 2'),
      line: 2,
      message: /^the ' opened at column 10 is never closed/,
    },
    {
      case: 'a key indented more than the keys before it',
      text: lines('cluster: prod', 'service: web', 'healthCheck:', '  command: [CMD, "true"]', '    retries: 3'),
      line: 5,
      message: 'this line is indented 4 spaces, the line above it (`command: [CMD, "true"]`, line 4) 2 spaces: YAML nests by indentation, so indent it as the keys it belongs with.',
    },
    {
      case: 'a key indented less than the keys before it',
      text: lines('cluster: prod', 'service: web', 'healthCheck:', '  command: [CMD, "true"]', ' retries: 3'),
      line: 5,
      message: /^this line is indented 1 space, the line above it \(`command: \[CMD, "true"\]`, line 4\) 2 spaces/,
    },
    {
      // yaml places this one at the value above (line 2), which turned into a multi-line key.
      case: 'a key indented under a plain value',
      text: lines('cluster: prod', 'service: web', '  image: nginx', 'desiredCount: 1'),
      line: 3,
      message:
        'this line is indented 2 spaces, more than `service: web` on line 2, so YAML reads it as the rest of that value, which cannot hold a key: indent it as the keys above it are.',
    },
    {
      case: 'a list item indented under a plain value',
      text: lines('- cluster: prod', '  service: web', '- cluster: prod', '  service: api', '   image: nginx'),
      line: 5,
      message: /^this line is indented 3 spaces, more than `service: api` on line 4/,
    },
    {
      case: 'a mapping as a value on its key line',
      text: lines('cluster: prod', 'service: web: api'),
      line: 2,
      message: 'a value on the same line as its key cannot be a mapping (`a: b: c`): put the inner key on its own line, indented, or quote the value.',
    },
    {
      case: 'a tab indentation',
      text: lines('cluster: prod', 'service: web', 'healthCheck:', '\tretries: 3'),
      line: 4,
      message: 'this line is indented with a tab, and YAML indents with spaces only: replace the tab with spaces.',
    },
    {
      case: 'a duplicate key',
      text: lines('cluster: prod', 'service: web', 'desiredCount: 2', 'cpu: 256', 'desiredCount: 3'),
      line: 5,
      message: '`desiredCount` is given twice in the same mapping (first on line 3): keep one of them.',
    },
    {
      case: 'a duplicate key in a nested mapping',
      text: lines('cluster: prod', 'service: web', 'environment:', '  A: "1"', '  B: "2"', '  A: "3"'),
      line: 6,
      message: '`A` is given twice in the same mapping (first on line 4): keep one of them.',
    },
    {
      case: 'a duplicate key in a flow map',
      text: lines('cluster: prod', 'service: web', 'environment: {A: "1", A: "2"}'),
      line: 3,
      message: '`A` is given twice in the same mapping (first on line 3): keep one of them.',
    },
    {
      case: 'an unknown escape in double quotes',
      text: lines('cluster: prod', 'service: web', 'command: ["C:\\q"]'),
      line: 3,
      message: /^\\q at column 14 is not an escape YAML knows inside "\.\.\.": write \\\\ for a backslash/,
    },
    {
      case: 'a value starting with a reserved character',
      text: lines('cluster: prod', 'service: @web'),
      line: 2,
      message: 'a value cannot start with @ (column 10) unless it is quoted: put it in quotes.',
    },
  ])('reports $case on the line of the mistake, in one sentence', ({ text, line, message }) => {
    const { docs, errors } = parseSpecsYaml(text, 'f.yaml');
    expect(docs).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: 'f.yaml', line });
    expect(errors[0].message.startsWith('YAML syntax error: ')).toBe(true);
    const sentence = errors[0].message.slice('YAML syntax error: '.length);
    if (typeof message === 'string') expect(sentence).toBe(message);
    else expect(sentence).toMatch(message);
    // One sentence: no line break, one full stop at the end (none inside but in quoted text).
    expect(sentence).not.toContain('\n');
    expect(sentence).toMatch(/\.$/);
  });

  it('places every syntax error of a mangled file on one of its lines, one error per document, never throwing', () => {
    const valid = lines('cluster: prod', 'service: web', 'image: "nginx:1.27"', 'subnets: [subnet-1, subnet-2]', 'environment: {A: "1"}', 'healthCheck:', '  command: [CMD, "true"]', '  retries: 3');
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(valid.length), fc.constantFrom('"', "'", '[', ']', '{', '}', '\t', ' ', ':', '\n', '- ', '\\', '#', '&a', '*a')), { minLength: 1, maxLength: 4 }), (edits) => {
        let text = valid;
        for (const [at, piece] of edits) text = text.slice(0, at % (text.length + 1)) + piece + text.slice(at % (text.length + 1));
        const { errors } = parseSpecsYaml(text, 'f.yaml');
        const lineCount = text.split('\n').length;
        for (const e of errors) {
          expect(e.line).toBeGreaterThanOrEqual(1);
          expect(e.line).toBeLessThanOrEqual(lineCount);
          expect(e.message).not.toContain('\n');
        }
        expect(errors.filter((e) => e.message.startsWith('YAML syntax error')).length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    { case: 'a scalar document', text: lines('just a string'), line: 1, message: 'document 1 must be a spec (a mapping with cluster, service, ...), got a scalar' },
    { case: 'a scalar list item', text: lines('- cluster: a', '  service: b', '  state: absent', '- 42'), line: 4, message: 'item 2 of document 1 must be a spec (a mapping with cluster, service, ...), got a scalar' },
    { case: 'a nested list', text: lines('- - cluster: a'), line: 1, message: 'item 1 of document 1 must be a spec (a mapping with cluster, service, ...), got a list' },
    { case: 'an empty list item', text: lines('- cluster: a', '  service: b', '  state: absent', '-'), line: 4, message: 'item 2 of document 1 must be a spec (a mapping with cluster, service, ...), got an empty value' },
  ])('reports $case and reads the rest', ({ text, line, message }) => {
    const { errors } = parseSpecsYaml(text);
    expect(errors).toEqual([{ line, message }]);
  });

  it.each([
    { case: 'an empty file', text: '' },
    { case: 'only comments', text: lines('# nothing here', '# yet') },
    { case: 'only separators', text: lines('---', '---') },
  ])('reads nothing and reports nothing from $case', ({ text }) => {
    expect(parseSpecsYaml(text)).toEqual({ docs: [], errors: [] });
  });

  it('skips empty documents between specs', () => {
    const text = lines('---', '---', 'cluster: a', 'service: b', 'state: absent', '---', '');
    expect(parseSpecsYaml(text).docs.map((d) => d.line)).toEqual([3]);
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const bomb = lines(
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    );
    const { docs, errors } = parseSpecsYaml(bomb);
    expect(docs).toEqual([]);
    expect(errors).toEqual([{ line: 1, message: expect.stringMatching(/^document 1 could not be read: .*alias/i) }]);
  });

  it('reads back what specToItem writes as YAML', () => {
    // Prepare: a spec with nested maps and lists
    const first = parseSpecItem({
      cluster: 'prod',
      service: 'web',
      image: 'nginx:1.27',
      desiredCount: 3,
      containerPort: 8080,
      environment: { PORT: '8080', EMPTY: '' },
      healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/ || exit 1'], retries: 3 },
      tags: { team: 'web' },
    });
    if (!first.ok) throw new Error('fixture must be valid');
    // Act
    const text = stringify([specToItem(first.spec), specToItem({ ...first.spec, service: 'api' })]);
    const { docs, errors } = parseSpecsYaml(text);
    // Assess
    expect(errors).toEqual([]);
    expect(docs[0].result).toEqual(first);
    expect(docs[1].result).toMatchObject({ ok: true, spec: { service: 'api', environment: { PORT: '8080', EMPTY: '' } } });
  });
});

// ---------------------------------------------------------------------------------------------
// The spec page's example: the DynamoDB console item, stored in an embedded DynamoDB and read back
// through lib-dynamodb as the reconciler reads it, is the same spec as the YAML. Both texts are
// read from docs/spec.md itself (the first json and yaml blocks of "Example: a web service"), so
// the documentation cannot drift from what the parser accepts. The README's tour spec and
// examples/web.yaml are checked against it too.
// ---------------------------------------------------------------------------------------------

const SPEC_PAGE = readFileSync(new URL('../docs/spec.md', import.meta.url), 'utf8');
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
function fenced(text: string, heading: string, lang: string): string {
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`no heading "${heading}"`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(text.slice(at));
  if (!m) throw new Error(`no ${lang} block under "${heading}"`);
  return m[1];
}
const README_DYNAMODB_JSON = fenced(SPEC_PAGE, '### Example: a web service', 'json');
const README_YAML = fenced(SPEC_PAGE, '### Example: a web service', 'yaml');
const REAL_WORLD = '### Example: a real-world service (sidecars, EFS, two target groups)';

describe('the spec example (docs/spec.md)', () => {
  let db: EmbeddedDynamoDb;
  let client: DynamoDBClient;
  const TableName = 'specs-readme';

  beforeAll(async () => {
    db = await startEmbeddedDynamoDb();
    client = new DynamoDBClient({ endpoint: db.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    await client.send(new CreateTableCommand(specsTableDefinition(TableName)));
  });

  afterAll(async () => {
    client?.destroy();
    await db?.stop();
  });

  it('is the same valid spec as a console item read through lib-dynamodb and as YAML', async () => {
    // Prepare: the console item, as DynamoDB JSON
    await client.send(new PutItemCommand({ TableName, Item: JSON.parse(README_DYNAMODB_JSON) }));
    // Act
    const { Item } = await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName, Key: { cluster: 'prod', service: 'web' } }));
    const fromTable = parseSpecItem(Item!);
    const fromYaml = parseSpecsYaml(README_YAML, 'services.yaml');
    // Assess: the String Set arrived as a Set and was accepted; both give one spec and one hash
    expect(Item!.subnets).toBeInstanceOf(Set);
    expect(fromYaml.errors).toEqual([]);
    expect(fromTable.ok ? [] : fromTable.errors).toEqual([]);
    expect(fromYaml.docs.map((d) => d.result)).toEqual([fromTable]);
  });

  it('the real-world example (sidecars, EFS, two target groups) is one valid spec as a console item and as YAML, and renders the whole task and both target groups', async () => {
    // Prepare: the console item, as DynamoDB JSON
    await client.send(new PutItemCommand({ TableName, Item: JSON.parse(fenced(SPEC_PAGE, REAL_WORLD, 'json')) }));

    // Act
    const { Item } = await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName, Key: { cluster: 'prod', service: 'shop' } }));
    const fromTable = parseSpecItem(Item!);
    const fromYaml = parseSpecsYaml(fenced(SPEC_PAGE, REAL_WORLD, 'yaml'), 'services.yaml');

    // Assess
    expect(fromYaml.errors).toEqual([]);
    expect(fromTable.ok ? [] : fromTable.errors).toEqual([]);
    expect(fromYaml.docs.map((d) => d.result)).toEqual([fromTable]);
    if (!fromTable.ok) return;
    const td = renderTaskDefinition(fromTable.spec, { defaults: { subnets: [], securityGroups: [] }, ownerId: 'docs' });
    expect(td.family).toBe('shop-live');
    expect(td.containerDefinitions?.map((c) => [c.name, c.essential ?? true])).toEqual([
      ['app', true],
      ['log_router', true],
      ['datadog-agent', false],
    ]);
    expect(td.volumes).toEqual([expect.objectContaining({ name: 'media', efsVolumeConfiguration: expect.objectContaining({ fileSystemId: 'fs-0123456789abcdef0' }) })]);
    const service = desiredServiceConfig(fromTable.spec, { subnets: [], securityGroups: [] });
    expect(service.loadBalancers.map((l) => [l.containerName, l.containerPort])).toEqual([
      ['app', 8080],
      ['app', 9090],
    ]);
    expect(service.capacityProviderStrategy.map((c) => c.capacityProvider)).toEqual(['FARGATE', 'FARGATE_SPOT']);
  });
});


describe('parseSpecsYaml refuses what it would read wrong', () => {
  const web = (...more: string[]) => lines('cluster: prod', 'service: web', 'desiredCount: 2', ...more);

  it.each([
    { case: 'a CloudFormation tag on a scalar', text: web('image: !Ref ImageParam'), line: 4, message: /the tag !Ref is not one YAML knows/ },
    { case: 'a custom tag on a mapping', text: web('image: nginx:1.27', 'environment: !Sub', '  A: b'), line: 5, message: /the tag !Sub is not one YAML knows/ },
    { case: 'a mapping tag on a list', text: web('image: nginx:1.27', 'subnets: !!map [subnet-0123456789abcdef0]'), line: 5, message: /tag:yaml.org,2002:map/ },
    { case: 'an anchor ending in a colon', text: web('image: &img: nginx:1.27'), line: 4, message: /Anchor ending in : is ambiguous/ },
  ])('refuses $case, naming the line, and keeps no spec of that document', ({ text, line, message }) => {
    // Act
    const { docs, errors } = parseSpecsYaml(`${text}---\n${lines('cluster: prod', 'service: api', 'image: nginx:1.27', 'desiredCount: 1')}`, 'specs.yaml');

    // Assess: the other document is still read
    expect(errors).toEqual([{ file: 'specs.yaml', line, message: expect.stringMatching(message) }]);
    expect(errors[0].message).toMatch(/^YAML problem, document 1 not read: /);
    expect(docs.map((d) => (d.result.ok ? d.result.key.service : 'invalid'))).toEqual(['api']);
  });

  it('reads 500 specs of one list that share one <<: *defaults anchor', () => {
    // Prepare: the pattern "The service spec" recommends
    const first = lines('- &defaults', '  cluster: prod', '  service: s0', '  image: nginx:1.27', '  desiredCount: 2', '  cpu: 512', '  memory: 1024');
    const rest = Array.from({ length: 499 }, (_, i) => lines('- <<: *defaults', `  service: s${i + 1}`)).join('');

    // Act
    const { docs, errors } = parseSpecsYaml(first + rest);

    // Assess
    expect(errors).toEqual([]);
    expect(docs).toHaveLength(500);
    expect(docs.every((d) => d.result.ok && d.result.spec.cpu === 512)).toBe(true);
    expect(docs[499].result.key).toEqual({ cluster: 'prod', service: 's499' });
  });

  it('refuses a billion-laughs file (nine levels of ten aliases), saying why', () => {
    // Prepare
    const bomb = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    const names = 'abcdefghi';
    for (let i = 1; i < names.length; i++) bomb.push(`${names[i]}: &${names[i]} [${Array(10).fill(`*${names[i - 1]}`).join(', ')}]`);
    bomb.push(`laughs: [${Array(10).fill('*i').join(', ')}]`);

    // Act
    const { docs, errors } = parseSpecsYaml(lines(...bomb), 'bomb.yaml');

    // Assess
    expect(docs).toEqual([]);
    expect(errors).toEqual([{ file: 'bomb.yaml', line: 1, message: expect.stringContaining('document 1 could not be read: its aliases expand too far') }]);
  });

  it('refuses a text larger than MAX_SPEC_FILE_BYTES whole, with the limit', () => {
    // Prepare: a valid spec, then a comment past the limit
    const head = `${web('image: nginx:1.27')}#`;
    const text = `${head}${'x'.repeat(MAX_SPEC_FILE_BYTES - head.length + 1)}\n`;

    // Act
    const { docs, errors } = parseSpecsYaml(text, 'huge.yaml');

    // Assess
    expect(docs).toEqual([]);
    expect(errors).toEqual([{ file: 'huge.yaml', message: expect.stringContaining(`a spec file may hold at most ${MAX_SPEC_FILE_BYTES} (4 MiB)`) }]);
  });
});

describe('the README tour spec', () => {
  it("has a valid sidecar example (the second YAML block of '2. A spec')", () => {
    const at = README.indexOf('### 2. A spec');
    const blocks = [...README.slice(at, README.indexOf('### 3.')).matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    const sidecars = parseSpecsYaml(blocks[1] ?? '', 'README.md');
    expect(sidecars.errors).toEqual([]);
    expect(sidecars.docs.map((d) => (d.result.ok ? d.result.spec.containers?.map((c) => c.name) : d.result.errors))).toEqual([['app', 'log_router']]);
  });

  it('is valid and is examples/web.yaml with its optional attributes left out', () => {
    // Prepare
    const tour = parseSpecsYaml(fenced(README, '### 2. A spec', 'yaml'), 'README.md');
    const file = parseSpecsYaml(readFileSync(new URL('../examples/web.yaml', import.meta.url), 'utf8'), 'examples/web.yaml');
    // Assess: every attribute the README shows has the value the example file has
    expect(tour.errors).toEqual([]);
    const shown = tour.docs[0].result;
    const full = file.docs[0].result;
    if (!shown.ok || !full.ok) throw new Error('expected valid specs');
    for (const key of ['cluster', 'service', 'image', 'desiredCount', 'cpu', 'memory', 'containerPort'] as const) {
      expect(shown.spec[key]).toEqual(full.spec[key]);
    }
  });
});
