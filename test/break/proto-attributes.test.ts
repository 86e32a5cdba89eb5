/**
 * `__proto__` in a spec item. lib-dynamodb's unmarshall builds maps by
 * assignment, so a top-level `__proto__` attribute or `environment: {"__proto__": "x", "OK": "1"}`
 * vanished before the validator saw it (the item got only "desiredCount: is required", or was
 * accepted with the variable lost). The store now reads raw attribute values and decodes them
 * itself (`attribute-values.ts`): such a key is rejected with an error naming it. On moto, which
 * keeps `__proto__` keys (dynalite drops them on write), and on the decoder alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateTableCommand, DynamoDBClient, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { decodeItem } from '../../lambda/adapters/attribute-values';
import { DynamoSpecStore, specsTableDefinition } from '../../lambda/adapters/dynamo-spec-store';
import { createDocumentClient } from '../../lambda/adapters/clients';
import { formatSpecError, parseSpecItem } from '../../lambda/core/spec';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { LOCAL } from '../runtime/support';

/** A valid spec item as raw attribute values, plus `extra`. Built with JSON.parse so `__proto__` is an own key. */
function rawItem(service: string, extra: string): Record<string, AttributeValue> {
  return JSON.parse(`{
    "cluster": {"S": "apps"}, "service": {"S": "${service}"}, "image": {"S": "public.ecr.aws/nginx/nginx:1.27"},
    "desiredCount": {"N": "2"}, "cpu": {"N": "256"}, "memory": {"N": "512"},
    "subnets": {"L": [{"S": "subnet-0123456789abcdef0"}]}, "securityGroups": {"L": [{"S": "sg-0123456789abcdef0"}]}
    ${extra}
  }`) as Record<string, AttributeValue>;
}

const CASES = [
  { case: 'a top-level __proto__ attribute', service: 'top', extra: ', "__proto__": {"S": "x"}', path: '__proto__' },
  { case: 'environment.__proto__', service: 'env', extra: ', "environment": {"M": {"__proto__": {"S": "x"}, "OK": {"S": "1"}}}', path: 'environment.__proto__' },
  { case: 'tags.__proto__', service: 'tags', extra: ', "tags": {"M": {"__proto__": {"S": "x"}}}', path: 'tags.__proto__' },
  { case: 'secrets.__proto__', service: 'sec', extra: ', "secrets": {"M": {"__proto__": {"S": "arn:aws:ssm:us-east-1:123456789012:parameter/x"}}}', path: 'secrets.__proto__' },
];

describe('__proto__ keys are never lost', () => {
  it.each(CASES)('decoder: $case stays a key and is rejected by name', ({ service, extra, path }) => {
    // Prepare
    const raw = rawItem(service, extra);

    // Act
    const decoded = decodeItem(raw);
    const parsed = parseSpecItem(decoded);

    // Assess: the library's unmarshall loses it; ours keeps it, and the parser names it.
    expect(JSON.stringify(unmarshall(raw))).not.toContain('__proto__');
    expect(JSON.stringify(decoded)).toContain('__proto__');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors.map(formatSpecError).join('; ')).toContain(`${path}:`);
  });

  it('decoder: every other key and type is as unmarshall gives it', () => {
    const raw = rawItem('web', ', "environment": {"M": {"OK": {"S": "1"}, "constructor": {"S": "c"}}}, "adopt": {"BOOL": true}, "x": {"NULL": true}, "ss": {"SS": ["a"]}, "big": {"N": "12345678901234567890"}');
    expect(decodeItem(raw)).toEqual(unmarshall(raw));
  });

  describe('on moto', needs('moto'), () => {
    let moto: MotoServer;
    let ddb: DynamoDBClient;
    beforeAll(async () => {
      moto = await startMoto();
    });
    afterAll(async () => {
      ddb?.destroy();
      await moto?.stop();
    });
    beforeEach(async () => {
      await moto.reset();
      ddb = new DynamoDBClient({ ...LOCAL, endpoint: moto.endpoint });
      await ddb.send(new CreateTableCommand(specsTableDefinition('specs')));
    });

    it('every such item is invalid with an error naming the key; a clean item next to them is valid', async () => {
      // Prepare
      for (const c of CASES) await ddb.send(new PutItemCommand({ TableName: 'specs', Item: rawItem(c.service, c.extra) }));
      await ddb.send(new PutItemCommand({ TableName: 'specs', Item: rawItem('clean', '') }));
      const doc = createDocumentClient({ ...LOCAL, endpoint: moto.endpoint });
      const store = new DynamoSpecStore(doc, 'specs');

      // Act
      const read = await store.readAll();
      doc.destroy();

      // Assess
      expect(read.complete).toBe(true);
      const byService = new Map(read.specs.map((s) => [s.key?.service, s]));
      expect(byService.get('clean')?.ok).toBe(true);
      for (const c of CASES) {
        const r = byService.get(c.service);
        expect(r?.ok, c.case).toBe(false);
        if (r && !r.ok) expect(r.errors.map(formatSpecError).join('; '), c.case).toContain(`${c.path}:`);
      }
    });
  });
});
