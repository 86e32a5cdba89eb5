/**
 * The HTTP server of `ecsr ui` (node:http): bound to 127.0.0.1 only, read-only, answering only
 * requests whose `Host` is this loopback address or `localhost` with its port (so a web page on
 * another site cannot reach it through a DNS name rebound to 127.0.0.1). Routes:
 *
 * - `GET /`: the page (./ui-page.ts), with the fleet as last read;
 * - `GET /api/fleet`: the fleet as JSON (`FleetSnapshot` of ./ui-fleet.ts, plus `version`);
 * - `GET /events`: server-sent events, one `fleet` event at once and one after each read of the
 *   table (`{ version, readAt, html? }`, `html` only when the fleet changed).
 *
 * The table is read every `intervalMs` while at least one page follows the events, and at most
 * once an interval for `GET /` and `/api/fleet` otherwise: however many tabs are open, one Scan
 * per interval. A failed read keeps the services of the last good one and says why (`error`).
 *
 * Source: Node.js `http` documentation (createServer, listen on a host, closeAllConnections);
 * the HTML Living Standard, "Server-sent events" (the `text/event-stream` format, `retry:`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../../../lambda/adapters/errors';
import { CliError } from './errors';
import type { FleetSnapshot } from './ui-fleet';
import { renderFleet, renderPage } from './ui-page';

/** The only address the server listens on. */
export const LOOPBACK = '127.0.0.1';

/** The fleet as the server holds it: the last snapshot, its HTML and a version that counts changes. */
interface Held {
  readonly snapshot: FleetSnapshot;
  readonly html: string;
  readonly version: number;
  /** Milliseconds (the server's clock) of the read. */
  readonly at: number;
}

export interface UiServerOptions {
  /** Reads the fleet (one Scan); a rejection is shown on the page and retried. */
  readonly read: () => Promise<FleetSnapshot>;
  /** The port on 127.0.0.1; 0 takes any free one. */
  readonly port: number;
  /** Milliseconds between reads of the table while a page follows it. */
  readonly intervalMs: number;
}

export interface UiServer {
  /** `http://127.0.0.1:PORT/`. */
  readonly url: string;
  readonly port: number;
  /** Stops reading, ends the event streams and closes the server. */
  close(): Promise<void>;
}

/** The fleet, read once an interval at most, and who follows it. */
class Fleet {
  private held: Held;
  private reading: Promise<Held> | undefined;
  readonly followers = new Set<(h: Held, changed: boolean) => void>();

  constructor(
    first: FleetSnapshot,
    private readonly read: () => Promise<FleetSnapshot>,
    readonly intervalMs: number,
  ) {
    this.held = { snapshot: first, html: renderFleet(first), version: 1, at: Date.now() };
  }

  get current(): Held {
    return this.held;
  }

  /** Reads the table again (one read at a time) and tells the followers. */
  refresh(): Promise<Held> {
    this.reading ??= this.readOnce().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** The fleet, read again first when the last read is older than an interval. */
  async fresh(): Promise<Held> {
    return Date.now() - this.held.at >= this.intervalMs ? this.refresh() : this.held;
  }

  private async readOnce(): Promise<Held> {
    let snapshot: FleetSnapshot;
    try {
      snapshot = await this.read();
    } catch (err) {
      const before = this.held.snapshot;
      snapshot = { ...before, readAt: new Date().toISOString(), error: `The last read of table ${before.table} failed (the services are as read before; retrying): ${errorMessage(err)}` };
    }
    const html = renderFleet(snapshot);
    const changed = html !== this.held.html;
    this.held = { snapshot, html, version: this.held.version + (changed ? 1 : 0), at: Date.now() };
    for (const f of this.followers) f(this.held, changed);
    return this.held;
  }
}

/** Headers of every answer: nothing cached, nothing from elsewhere (the page inlines all it needs). */
const COMMON_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

function send(res: ServerResponse, code: number, type: string, body: string): void {
  res.writeHead(code, { ...COMMON_HEADERS, 'Content-Type': `${type}; charset=utf-8`, 'Content-Length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Whether `host` (the request's Host header) names this server: 127.0.0.1 or localhost, with its port. */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
  return host === `${LOOPBACK}:${port}` || host === `localhost:${port}`;
}

/** `GET /events`: the fleet at once, then after each read, until the page goes away. */
function followEvents(fleet: Fleet, req: IncomingMessage, res: ServerResponse, streams: Set<ServerResponse>): void {
  res.writeHead(200, { ...COMMON_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  let sent = 0;
  const push = (h: Held) => {
    const data = { version: h.version, readAt: h.snapshot.readAt, ...(h.version !== sent ? { html: h.html } : {}) };
    sent = h.version;
    res.write(`event: fleet\ndata: ${JSON.stringify(data)}\n\n`);
  };
  res.write('retry: 2000\n\n');
  push(fleet.current);
  fleet.followers.add(push);
  streams.add(res);
  req.on('close', () => {
    fleet.followers.delete(push);
    streams.delete(res);
  });
}

/** Answers one request (see the module's comment for the routes). */
async function answer(fleet: Fleet, port: number, req: IncomingMessage, res: ServerResponse, streams: Set<ServerResponse>): Promise<void> {
  if (!isLoopbackHost(req.headers.host, port)) {
    send(res, 403, 'text/plain', `ecsr ui answers only requests to http://${LOOPBACK}:${port}/ or http://localhost:${port}/ (Host ${JSON.stringify(req.headers.host ?? '')} refused).\n`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, 405, 'text/plain', 'ecsr ui is read-only: GET and HEAD only.\n');
    return;
  }
  const path = new URL(req.url ?? '/', `http://${LOOPBACK}:${port}`).pathname;
  if (path === '/events') return followEvents(fleet, req, res, streams);
  if (path === '/') {
    const h = await fleet.fresh();
    send(res, 200, 'text/html', renderPage(h.snapshot, { intervalSeconds: fleet.intervalMs / 1000, version: h.version }));
  } else if (path === '/api/fleet') {
    const h = await fleet.fresh();
    send(res, 200, 'application/json', `${JSON.stringify({ version: h.version, ...h.snapshot }, null, 2)}\n`);
  } else send(res, 404, 'text/plain', `No page ${path}: the fleet is at /, its JSON at /api/fleet.\n`);
}

/** Listens on 127.0.0.1:`port`. @throws CliError when the port is taken or not allowed. */
function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new CliError(`Port ${port} is in use on ${LOOPBACK}: pass --port N (--port 0 takes a free one).`));
      else if (err.code === 'EACCES') reject(new CliError(`Port ${port} on ${LOOPBACK} needs privileges: pass --port N above 1023 (--port 0 takes a free one).`));
      else reject(err);
    });
    server.listen(port, LOOPBACK, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * Reads the fleet once (so a missing table fails before anything listens), then serves it on
 * 127.0.0.1 and reads it again every `intervalMs` while a page follows the events.
 * @throws what `read` throws on the first read (CliError for a missing table); CliError when
 *   the port cannot be listened on.
 */
export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const fleet = new Fleet(await opts.read(), opts.read, opts.intervalMs);
  const streams = new Set<ServerResponse>();
  let port = opts.port;
  const server = createServer((req, res) => {
    answer(fleet, port, req, res, streams).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `ecsr ui: ${errorMessage(err)}\n`);
      else res.end();
    });
  });
  port = await listen(server, opts.port);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = setTimeout(() => {
      const next = () => {
        if (!stopped) tick();
      };
      if (fleet.followers.size > 0) fleet.refresh().then(next, next);
      else next();
    }, opts.intervalMs);
  };
  tick();
  return {
    url: `http://${LOOPBACK}:${port}/`,
    port,
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      for (const r of streams) r.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
