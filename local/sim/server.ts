/**
 * The simulator on HTTP: ECS's AWS JSON 1.1 protocol on `POST /` (for the unmodified
 * `@aws-sdk/client-ecs` via `endpoint` / `AWS_ENDPOINT_URL_ECS`, and `aws ecs ... --endpoint-url`),
 * and the control endpoint under `/_sim/`. SigV4 signatures are accepted without checking.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleControl } from './control';
import { SimulatedEcs, type SimulatedEcsOptions } from './ecs';
import { EcsApiError } from './errors';
import { JSON_11_CONTENT_TYPE, actionFromTarget, encodeBody, errorBody, parseBody } from './protocol';
import { own } from '../../lambda/core/dict';

export interface StartSimulatorOptions extends SimulatedEcsOptions {
  /** Loopback port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Real milliseconds added to each ECS call (default 0). */
  readonly latencyMs?: number;
}

/** Thrown by {@link startSimulator} when the server cannot listen; the message is one sentence. */
export class SimulatorListenError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SimulatorListenError';
  }
}

/**
 * A loopback server of the local run could not listen; the message is one sentence naming the
 * option that chooses its port, e.g. `Port 4100 is already in use on 127.0.0.1; choose another
 * with --port (0 picks a free one).`
 */
export class ListenError extends Error {
  readonly code: string | undefined;
  constructor(
    cause: NodeJS.ErrnoException,
    readonly host: string,
    readonly port: number,
    /** The command line option that chooses the port. */
    readonly option: string,
  ) {
    super(listenMessage(cause, host, port, option), { cause });
    this.name = 'ListenError';
    this.code = cause.code;
  }
}

/** The one sentence for a listen failure (`EADDRINUSE`, `EACCES`, other). */
export function listenMessage(e: NodeJS.ErrnoException, host: string, port: number, option = '--port'): string {
  const where = `${host}:${port}`;
  return e.code === 'EADDRINUSE'
    ? `Port ${port} is already in use on ${host}; choose another with ${option} (0 picks a free one).`
    : e.code === 'EACCES'
      ? `Not allowed to listen on ${where}; choose a port above 1023 with ${option}.`
      : `Cannot listen on ${where}: ${e.message}.`;
}

/** Largest request body accepted (bytes); ECS's own limit is far above anything the simulator needs. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** A running simulator: the in-process core plus its HTTP endpoint. */
export class Simulator extends SimulatedEcs {
  private server: Server | undefined;
  private boundPort = 0;
  readonly host: string;

  constructor(opts: StartSimulatorOptions = {}) {
    super(opts);
    this.host = opts.host ?? '127.0.0.1';
    if (opts.latencyMs !== undefined) this.latencyMs = opts.latencyMs;
  }

  /** `http://HOST:PORT`, for `endpoint` / `AWS_ENDPOINT_URL_ECS` / `--endpoint-url`. */
  get endpoint(): string {
    return `http://${this.host}:${this.boundPort}`;
  }

  get port(): number {
    return this.boundPort;
  }

  /** @throws SimulatorListenError e.g. when the port is in use. */
  async listen(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => {
        reject(new SimulatorListenError(listenMessage(e, this.host, port), e.code, { cause: e }));
      });
      server.listen(port, this.host, () => resolve());
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  /** Stops the HTTP server and the clock. */
  override async close(): Promise<void> {
    super.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    // The `Date` header is the simulated time, as ECS's is its own clock: the SDK derives its clock
    // offset from it (`systemClockOffset`), which is how `ecsr ... --wait` measures its stability
    // window in ECS's time.
    res.setHeader('date', this.clock.now().toUTCString());
    try {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
        let body: unknown = {};
        if (raw.trim() !== '') {
          try {
            body = JSON.parse(raw);
          } catch {
            return send(res, 400, { 'content-type': 'application/json' }, JSON.stringify({ error: 'InvalidInput', message: 'The body is not valid JSON.' }));
          }
        }
        const out = handleControl(this, req.method ?? 'GET', url.pathname, url.searchParams, body);
        return send(res, out.status, { 'content-type': 'application/json' }, JSON.stringify(out.body));
      }
      if (req.method === 'GET' && url.pathname === '/') {
        return send(
          res,
          200,
          { 'content-type': 'application/json' },
          JSON.stringify({ service: 'ecs-simulator', endpoint: this.endpoint, region: this.region, control: `${this.endpoint}/_sim/state` }),
        );
      }
      if (req.method !== 'POST' || url.pathname !== '/') {
        throw new EcsApiError('UnknownOperationException', 'The action or operation requested is invalid.');
      }
      const action = actionFromTarget(header(req, 'x-amz-target'));
      const input = parseBody(raw);
      if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
      const out = this.call(action, input, this.callerOf(accessKeyIdOf(header(req, 'authorization'))));
      send(res, 200, { 'content-type': JSON_11_CONTENT_TYPE, 'x-amzn-requestid': requestId }, encodeBody(out));
    } catch (e) {
      const err =
        e instanceof EcsApiError ? e : new EcsApiError('ServerException', `The simulator failed: ${e instanceof Error ? e.message : String(e)}`);
      send(res, err.status, { 'content-type': JSON_11_CONTENT_TYPE, 'x-amzn-requestid': requestId }, errorBody(err));
    }
  }
}

/**
 * The access key id of a SigV4 `Authorization` header (`AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/ecs/aws4_request, ...`):
 * who calls, for the CloudTrail events (the signature itself is not checked).
 */
export function accessKeyIdOf(authorization: string | undefined): string | undefined {
  const m = /Credential=([^/,\s]+)\//.exec(authorization ?? '');
  return m?.[1];
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = own(req.headers, name);
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The request body as text.
 * @throws EcsApiError SerializationException (HTTP 413) above {@link MAX_BODY_BYTES}. The rest of
 *   such a body is read and dropped rather than the connection reset, so that the client gets the
 *   answer (a reset would look like a network fault, which the SDK retries).
 */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
      else chunks.length = 0;
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) reject(new EcsApiError('SerializationException', 'The request body is too large.', 413));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/**
 * Starts the ECS simulator on loopback.
 * @param opts `port` (0 = free, default), `host` (default 127.0.0.1), `speed` (virtual seconds per
 *   real second; undefined = manual clock), `startTime`, `seed` (default 1), `throttling` (default
 *   true), `region` (us-east-1), `accountId` (123456789012), `clusters` (pre-created names).
 * @returns the running {@link Simulator}; `close()` it when done.
 * @throws SimulatorListenError when it cannot listen (port in use, ...).
 */
export async function startSimulator(opts: StartSimulatorOptions = {}): Promise<Simulator> {
  const sim = new Simulator(opts);
  try {
    await sim.listen(opts.port ?? 0);
  } catch (e) {
    await sim.close();
    throw e;
  }
  return sim;
}
