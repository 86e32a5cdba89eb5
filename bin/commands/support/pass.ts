/**
 * The reconcile pass as `ecsr` runs it (`reconcile`, `plan`, `diff`): the same runtime factory as
 * the Lambda handler (`createRuntime`), configured from the same environment variables, with
 * metrics kept in memory (EMF lines would mean nothing on a workstation) and logs on stderr only
 * with `--verbose`.
 */
import { ENV, loadConfig, type ReconcilerConfig } from '../../../lambda/config';
import { RecordingLog } from '../../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../../lambda/adapters/metrics';
import { createRuntime, type Runtime } from '../../../lambda/adapters/runtime';
import { runPass, type PassSummary } from '../../../lambda/core/pass';
import type { LeaseResult, LogPort, SpecRead, SpecStore } from '../../../lambda/core/ports';
import { serviceId, type ServiceKey, type ServiceStatus, type SpecParseResult } from '../../../lambda/core/types';

/**
 * The reconciler configuration for `table`: every other variable (`DEFAULT_SUBNETS`,
 * `MANAGED_CLUSTERS`, `OWNER_ID`, ...) from the environment, as the Lambda reads it.
 * @throws ConfigError naming each invalid variable.
 */
export function cliConfig(table: string, env: Record<string, string | undefined> = process.env): ReconcilerConfig {
  return loadConfig({ ...env, [ENV.specsTable]: table });
}

/** {@link LogPort} writing `level message {fields}` lines to stderr. */
export class StderrLog implements LogPort {
  info(message: string, fields: Record<string, unknown> = {}): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields: Record<string, unknown> = {}): void {
    this.write('error', message, fields);
  }
  private write(level: string, message: string, fields: Record<string, unknown>): void {
    const extra = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    process.stderr.write(`${level} ${message}${extra}\n`);
  }
}

/** A runtime for one CLI command; `close()` it to release its sockets. */
export function cliRuntime(config: ReconcilerConfig, opts: { verbose?: boolean } = {}): Runtime & { close(): void } {
  const runtime = createRuntime(config, {
    metrics: new InMemoryMetricsSink(),
    log: opts.verbose ? new StderrLog() : new RecordingLog(),
  });
  return {
    ...runtime,
    close: () => {
      runtime.ecs.destroy();
      runtime.doc.destroy();
    },
  };
}

/**
 * A spec store that reads the table with some specs replaced or added, as if they had been
 * applied: what `ecsr diff -f FILE` plans against. Remembered statuses are the table's. It never
 * writes (a dry run takes no lease and writes no status).
 */
export class OverlaySpecStore implements SpecStore {
  constructor(
    private readonly base: SpecStore,
    private readonly overlay: readonly Extract<SpecParseResult, { ok: true }>[],
  ) {}

  async readAll(): Promise<SpecRead> {
    const read = await this.base.readAll();
    const replaced = new Map(this.overlay.map((r) => [serviceId(r.key), r]));
    const specs: SpecParseResult[] = [];
    for (const s of read.specs) {
      const id = s.key ? serviceId(s.key) : undefined;
      const over = id ? replaced.get(id) : undefined;
      if (over && id) {
        specs.push(over);
        replaced.delete(id);
      } else {
        specs.push(s);
      }
    }
    specs.push(...replaced.values());
    return { ...read, specs };
  }

  writeStatus(_key: ServiceKey, _status: ServiceStatus): Promise<boolean> {
    return Promise.reject(new Error('a dry run writes no status'));
  }

  acquireLease(_holder: string, _ttlSeconds: number, _now: Date): Promise<LeaseResult> {
    return Promise.reject(new Error('a dry run takes no lease'));
  }

  releaseLease(_holder: string): Promise<void> {
    return Promise.reject(new Error('a dry run takes no lease'));
  }
}

/**
 * Runs one dry-run pass (plan only: no lease, no ECS write, no status write) over the table, or
 * over the table with `overlay` applied.
 * @returns the pass summary; its `actions` have outcome `planned`.
 */
export async function dryRunPass(
  config: ReconcilerConfig,
  overlay: readonly Extract<SpecParseResult, { ok: true }>[] | undefined,
  opts: { verbose?: boolean } = {},
): Promise<PassSummary> {
  const runtime = cliRuntime(config, opts);
  try {
    const specs = overlay ? new OverlaySpecStore(runtime.ports.specs, overlay) : runtime.ports.specs;
    return await runPass(
      { ...runtime.ports, specs },
      { plan: config.plan, dryRun: true, holder: 'ecsr-dry-run', leaseTtlSeconds: 60 },
    );
  } finally {
    runtime.close();
  }
}

/**
 * Throws the pass's first spec-read error as is: a dry run over a table that cannot be read
 * would otherwise plan from nothing.
 */
export function specReadError(summary: PassSummary): string | undefined {
  if (summary.specsComplete) return undefined;
  return summary.errors.find((e) => e.startsWith('specs:')) ?? 'the specs table could not be read completely';
}
