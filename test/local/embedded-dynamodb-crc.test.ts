/**
 * The embedded DynamoDB's answers carry a right `x-amz-crc32` once dynalite's buffer-crc32 is
 * pointed at Node's native CRC-32 (local/embedded-dynamodb.ts `useNativeCrc32`): the same value as
 * the JavaScript CRC-32 for Buffers and UTF-8 strings, and on a real answer.
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedDynamoDb, useNativeCrc32, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';

const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
const crc = fromDynalite('buffer-crc32') as { unsigned: (b: Buffer | string) => number; signed: (b: Buffer | string) => number };
/** buffer-crc32's own JavaScript CRC-32 (`signed` is never replaced), as unsigned. */
const jsCrc = (b: Buffer | string): number => crc.signed(b) >>> 0;

describe('the embedded DynamoDB checksum', () => {
  let db: EmbeddedDynamoDb;
  beforeAll(async () => {
    db = await startEmbeddedDynamoDb(0);
  }, 30_000);
  afterAll(async () => db?.stop());

  it('computes the CRC-32 the header uses, for Buffers and UTF-8 strings', () => {
    const native = useNativeCrc32();
    // The check value of CRC-32/ISO-HDLC: "123456789" -> 0xCBF43926.
    expect(crc.unsigned('123456789')).toBe(0xcbf43926);
    const inputs = ['', '{"Items":[]}', 'naïve 漢字 🚀 ' + 'x'.repeat(100_000), Buffer.from([0, 255, 1, 254, 128])];
    for (const input of inputs) expect(crc.unsigned(input)).toBe(jsCrc(input));
    // On Node 20.15 and later the native CRC-32 is used (this project's CI runs such a Node).
    expect(native).toBe(typeof (zlib as { crc32?: unknown }).crc32 === 'function');
  });

  it("signs a real answer with the body's CRC-32", async () => {
    const body = JSON.stringify({ TableName: 'crc-test', AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }], BillingMode: 'PAY_PER_REQUEST', Tags: [{ Key: 'note', Value: 'naïve 漢字' }] });
    const res = await fetch(db.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.CreateTable',
        authorization: 'AWS4-HMAC-SHA256 Credential=test/20261202/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        'x-amz-date': '20261202T000000Z',
      },
      body,
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('crc-test');
    expect(Number(res.headers.get('x-amz-crc32'))).toBe(jsCrc(Buffer.from(text, 'utf8')));
  });
});

