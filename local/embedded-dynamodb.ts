/**
 * An embedded DynamoDB: dynalite in-process, in memory, on a free loopback port. Used by the
 * local run (`npm start`) and by the tests.
 */
import dynalite from 'dynalite';
import { ListenError } from './sim/server';

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
