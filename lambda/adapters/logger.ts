/**
 * Logging ports: Powertools Logger (one JSON line per call, CloudWatch Logs in Lambda) and a
 * recording log for the local run and tests.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogPort } from '../core/ports';

/** Default `service` key of log lines (Powertools `serviceName`). */
export const LOG_SERVICE_NAME = 'ecs-reconciler';

/** {@link LogPort} on a Powertools Logger; `fields` become top-level keys of the JSON line. */
export class PowertoolsLog implements LogPort {
  constructor(readonly logger: Logger = new Logger({ serviceName: LOG_SERVICE_NAME })) {}

  info(message: string, fields: Record<string, unknown> = {}): void {
    this.logger.info(message, fields);
  }

  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.logger.warn(message, fields);
  }

  error(message: string, fields: Record<string, unknown> = {}): void {
    this.logger.error(message, fields);
  }
}

/** One recorded log line. */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** {@link LogPort} that keeps lines in memory (tests, the local run's event pane). */
export class RecordingLog implements LogPort {
  readonly lines: LogLine[] = [];

  info(message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'info', message, fields });
  }

  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'warn', message, fields });
  }

  error(message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'error', message, fields });
  }
}
