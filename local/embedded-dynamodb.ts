/**
 * An embedded DynamoDB: dynalite in-process, in memory, on a free loopback port. Used by the
 * local run (`npm start`) and by the tests.
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import dynalite from 'dynalite';
import { ListenError } from './sim/server';

/** buffer-crc32's `unsigned` (CRC-32 of a Buffer or a UTF-8 string, optionally continuing from `previous`). */
type UnsignedCrc32 = (input: Buffer | string | number, previous?: Buffer | number) => number;

let nativeCrc32: boolean | undefined;

/**
 * dynalite checksums every answer for its `x-amz-crc32` header (which the SDK's DynamoDB client
 * verifies) with buffer-crc32, a CRC-32 in JavaScript over the whole body: at 20,000 spec items
 * the Scans of the benchmark spent about 18 s of its process there. Node's
 * `zlib.crc32` (Node 20.15 and later) computes the same CRC-32 (IEEE 802.3, the one buffer-crc32
 * and the header use) natively, so dynalite's module is pointed at it once; on a Node without it
 * nothing changes. Strings are read as UTF-8 by both. Exported for its test.
 * @returns whether the native CRC-32 is in use.
 */
export function useNativeCrc32(): boolean {
  if (nativeCrc32 !== undefined) return nativeCrc32;
  const native = (zlib as { crc32?: (data: string | Uint8Array, value?: number) => number }).crc32;
  if (typeof native !== 'function') return (nativeCrc32 = false);
  // The copy dynalite itself loads (resolved from dynalite's own directory).
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const crc = fromDynalite('buffer-crc32') as { unsigned: UnsignedCrc32 };
  const js = crc.unsigned;
  crc.unsigned = (input, previous) =>
    (typeof input === 'string' || Buffer.isBuffer(input)) && previous === undefined ? native(input) : js(input, previous);
  return (nativeCrc32 = true);
}

export interface EmbeddedDynamoDb {
  /** `http://127.0.0.1:PORT`, for `endpoint` or `AWS_ENDPOINT_URL_DYNAMODB`. */
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * @param port loopback port; 0 (default) picks a free one.
 * @throws ListenError (one sentence naming `--dynamodb-port`) when it cannot listen, e.g. the port is taken.
 */
export async function startEmbeddedDynamoDb(port = 0): Promise<EmbeddedDynamoDb> {
  useNativeCrc32();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(e, '127.0.0.1', port, '--dynamodb-port')));
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    port: bound,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
