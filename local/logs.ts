/**
 * A small local CloudWatch Logs on loopback, for `ecsr logs` against the local run: the AWS JSON
 * 1.1 protocol (`X-Amz-Target: Logs_20140328.<Action>`) for CreateLogGroup, CreateLogStream,
 * PutLogEvents, FilterLogEvents (logStreamNames / logStreamNamePrefix, startTime / endTime, pages
 * of {@link PAGE_SIZE} with nextToken) and GetLogEvents; and, on the same port, STS
 * GetCallerIdentity (the query protocol), answering the caller the ECS simulator records for the
 * same access key, so that `ecsr` names a writer in the spec history locally. It is fed with the
 * log lines of the simulator's tasks by {@link feedTaskLogs}.
 *
 * Source: Amazon CloudWatch Logs API Reference (the actions above, their errors
 * ResourceNotFoundException and ResourceAlreadyExistsException); AWS STS API Reference,
 * GetCallerIdentity.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Events per FilterLogEvents / GetLogEvents page (CloudWatch Logs pages by size; small here so paging is exercised). */
export const PAGE_SIZE = 100;

interface StoredEvent {
  readonly timestamp: number;
  readonly message: string;
  readonly ingestionTime: number;
  readonly eventId: string;
}

class LogsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** The log groups and streams, in memory. */
export class LocalLogsStore {
  private readonly groups = new Map<string, Map<string, StoredEvent[]>>();
  private nextId = 1;

  createLogGroup(group: string): void {
    if (this.groups.has(group)) throw new LogsError('ResourceAlreadyExistsException', 'The specified log group already exists');
    this.groups.set(group, new Map());
  }

  createLogStream(group: string, stream: string): void {
    const g = this.group(group);
    if (g.has(stream)) throw new LogsError('ResourceAlreadyExistsException', 'The specified log stream already exists');
    g.set(stream, []);
  }

  /** Adds events (creating the group and stream when missing, as a driver with `awslogs-create-group` does). */
  put(group: string, stream: string, events: readonly { timestamp: number; message: string }[], now = Date.now()): void {
    if (!this.groups.has(group)) this.groups.set(group, new Map());
    const g = this.group(group);
    if (!g.has(stream)) g.set(stream, []);
    const list = g.get(stream)!;
    for (const e of events) list.push({ timestamp: e.timestamp, message: e.message, ingestionTime: now, eventId: String(this.nextId++).padStart(20, '0') });
    list.sort((a, b) => a.timestamp - b.timestamp);
  }

  private group(name: string): Map<string, StoredEvent[]> {
    const g = this.groups.get(name);
    if (!g) throw new LogsError('ResourceNotFoundException', 'The specified log group does not exist.');
    return g;
  }

  /** FilterLogEvents: events of the chosen streams in the time range, oldest first, a page at a time. */
  filter(input: Record<string, unknown>): Record<string, unknown> {
    const g = this.group(String(input.logGroupName));
    const names = Array.isArray(input.logStreamNames) ? (input.logStreamNames as string[]) : undefined;
    const prefix = typeof input.logStreamNamePrefix === 'string' ? input.logStreamNamePrefix : undefined;
    const start = typeof input.startTime === 'number' ? input.startTime : -Infinity;
    const end = typeof input.endTime === 'number' ? input.endTime : Infinity;
    const all = [...g.entries()]
      .filter(([s]) => (names ? names.includes(s) : prefix ? s.startsWith(prefix) : true))
      .flatMap(([s, events]) => events.filter((e) => e.timestamp >= start && e.timestamp <= end).map((e) => ({ logStreamName: s, ...e })))
      .sort((a, b) => a.timestamp - b.timestamp || a.eventId.localeCompare(b.eventId));
    const from = typeof input.nextToken === 'string' ? Number(input.nextToken) : 0;
    const limit = Math.min(typeof input.limit === 'number' ? input.limit : PAGE_SIZE, PAGE_SIZE);
    const page = all.slice(from, from + limit);
    return { events: page, searchedLogStreams: [], ...(from + limit < all.length ? { nextToken: String(from + limit) } : {}) };
  }

  /** GetLogEvents of one stream, oldest first (startFromHead) a page at a time. */
  get(input: Record<string, unknown>): Record<string, unknown> {
    const events = this.group(String(input.logGroupName)).get(String(input.logStreamName));
    if (!events) throw new LogsError('ResourceNotFoundException', 'The specified log stream does not exist.');
    const start = typeof input.startTime === 'number' ? input.startTime : -Infinity;
    const matching = events.filter((e) => e.timestamp >= start);
    const from = typeof input.nextToken === 'string' ? Number(input.nextToken.slice(2)) : 0;
    const page = matching.slice(from, from + PAGE_SIZE);
    const next = `f/${Math.min(from + PAGE_SIZE, matching.length)}`;
    return { events: page.map(({ timestamp, message, ingestionTime }) => ({ timestamp, message, ingestionTime })), nextForwardToken: next, nextBackwardToken: `b/${from}` };
  }
}

/** The JSON answer of one CloudWatch Logs action. */
function answerLogs(store: LocalLogsStore, action: string, input: Record<string, unknown>): unknown {
  switch (action) {
    case 'CreateLogGroup':
      store.createLogGroup(String(input.logGroupName));
      return {};
    case 'CreateLogStream':
      store.createLogStream(String(input.logGroupName), String(input.logStreamName));
      return {};
    case 'PutLogEvents':
      store.put(String(input.logGroupName), String(input.logStreamName), (input.logEvents as { timestamp: number; message: string }[]) ?? []);
      return { nextSequenceToken: '1' };
    case 'FilterLogEvents':
      return store.filter(input);
    case 'GetLogEvents':
      return store.get(input);
    default:
      throw new LogsError('UnknownOperationException', `The local CloudWatch Logs does not answer ${action}`);
  }
}

/** STS GetCallerIdentity's XML answer for `accessKeyId`: the IAM user the ECS simulator names for an unknown key. */
export function callerIdentityXml(accountId: string, accessKeyId: string): string {
  return [
    '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">',
    `<GetCallerIdentityResult><Arn>arn:aws:iam::${accountId}:user/${accessKeyId}</Arn><UserId>${accessKeyId}</UserId><Account>${accountId}</Account></GetCallerIdentityResult>`,
    '<ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata></GetCallerIdentityResponse>',
  ].join('');
}

/** The local CloudWatch Logs (and STS) server. */
export class LocalLogs {
  readonly store = new LocalLogsStore();
  private server: Server | undefined;
  private port = 0;

  constructor(private readonly accountId: string) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens on loopback (`port` 0: a free one). */
  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const target = req.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('Logs_20140328.')) {
      try {
        const out = answerLogs(this.store, target.slice('Logs_20140328.'.length), body ? (JSON.parse(body) as Record<string, unknown>) : {});
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(out));
      } catch (err) {
        const e = err instanceof LogsError ? err : new LogsError('InvalidParameterException', String(err));
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ __type: e.type, message: e.message }));
      }
      return;
    }
    if (new URLSearchParams(body).get('Action') === 'GetCallerIdentity') {
      const key = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? 'ANONYMOUS';
      res.writeHead(200, { 'content-type': 'text/xml' }).end(callerIdentityXml(this.accountId, key));
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ __type: 'UnknownOperationException', message: 'not a CloudWatch Logs or STS GetCallerIdentity request' }));
  }
}
