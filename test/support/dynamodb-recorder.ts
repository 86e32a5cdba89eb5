/**
 * A recording proxy in front of a DynamoDB endpoint (dynalite): every request is forwarded as is,
 * and its action (`X-Amz-Target` `DynamoDB_20120810.Scan` -> `Scan`) and the tables it names
 * (`TableName`, or the keys of `RequestItems`) are recorded, so a test can ask whether a policy
 * allows every DynamoDB call a command made.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DynamoCall {
  readonly action: string;
  readonly tables: readonly string[];
}

export interface DynamoRecorder {
  /** `http://127.0.0.1:PORT`: point `AWS_ENDPOINT_URL_DYNAMODB` here. */
  readonly endpoint: string;
  /** Calls in arrival order. */
  readonly calls: DynamoCall[];
  close(): Promise<void>;
}

function tablesOf(body: string): string[] {
  try {
    const json = JSON.parse(body) as { TableName?: unknown; RequestItems?: unknown };
    if (typeof json.TableName === 'string') return [json.TableName];
    if (json.RequestItems && typeof json.RequestItems === 'object') return Object.keys(json.RequestItems);
  } catch {
    // Not JSON: nothing named.
  }
  return [];
}

/** Starts the proxy on a free loopback port, forwarding to `target` (`http://127.0.0.1:PORT`). */
export async function startDynamoRecorder(target: string): Promise<DynamoRecorder> {
  const to = new URL(target);
  const calls: DynamoCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const targetHeader = String(req.headers['x-amz-target'] ?? '');
      calls.push({ action: targetHeader.split('.').pop() ?? targetHeader, tables: tablesOf(body.toString('utf8')) });
      const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 500, answer.headers);
        answer.pipe(res);
      });
      out.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
