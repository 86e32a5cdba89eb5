/**
 * The stream path's part of the spec history (docs/history.md): from a batch of the specs table's
 * stream records, the revisions of edits made outside ecsr and the outcomes the pass wrote.
 *
 * - A record whose spec attributes changed (INSERT, REMOVE, or a MODIFY beyond `status`) becomes
 *   a revision by "unknown: written outside ecsr", unless ecsr already recorded it
 *   (`SpecHistory.recordOutsideEdit`).
 * - A record whose `status` changed records on the revision of the status's spec hash what the
 *   pass saw (`outcomeOf`: converged, rolled back by ECS, refused, invalid...), and on the revision
 *   of `failedSpecHash` that ECS rolled it back. A status still in progress records nothing.
 *
 * Only history items are written (never the spec item), so this cannot race the pass's status
 * write. A failure is logged and counted, never thrown: the batch's reconcile must not be retried
 * for its history, and the next edit or status change is recorded as usual.
 *
 * Source: Amazon DynamoDB Developer Guide, "Change data capture for DynamoDB Streams" (records of
 * one item in order; `ApproximateCreationDateTime` in epoch seconds).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { canonicalJson } from '../core/canonical-json';
import type { LogPort } from '../core/ports';
import type { ServiceKey, ServiceStatus } from '../core/types';
import { splitPartitionKey } from '../core/targets';
import { decodeItem } from './attribute-values';
import { errorMessage } from './errors';
import { outcomeOf, SpecHistory } from './spec-history';

/** What a batch did to the history. */
export interface StreamHistorySummary {
  /** Revisions appended for edits made outside ecsr. */
  readonly revisions: number;
  /** Outcomes recorded on revisions. */
  readonly outcomes: number;
  /** Records whose history could not be written (logged). */
  readonly failed: number;
}

type Image = Record<string, unknown> | undefined;

function imageOf(raw: unknown): Image {
  return raw && typeof raw === 'object' ? decodeItem(raw as Record<string, AttributeValue>) : undefined;
}

/**
 * The spec attributes of an image (no `status`), or undefined; `cluster` without another target's
 * prefix, as the reconciler and ecsr read the spec (so both give it the same hash).
 */
function specOf(image: Image): Record<string, unknown> | undefined {
  if (!image) return undefined;
  const { status: _status, ...rest } = image;
  return typeof rest.cluster === 'string' ? { ...rest, cluster: splitPartitionKey(rest.cluster).cluster } : rest;
}

/** The image's status when it looks like one the pass wrote (a phase and a condition list). */
function statusOf(image: Image): ServiceStatus | undefined {
  const s = image?.status as Partial<ServiceStatus> | undefined;
  return s && typeof s === 'object' && typeof s.phase === 'string' && Array.isArray(s.conditions) ? (s as ServiceStatus) : undefined;
}

function same(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a ?? null) === canonicalJson(b ?? null);
  } catch {
    return false;
  }
}

/** The spec item's key as stored (the target prefix kept in `cluster`), or undefined for reserved and malformed records. */
function keyOf(record: DynamoDBRecord): ServiceKey | undefined {
  const keys = record.dynamodb?.Keys as Record<string, { S?: unknown }> | undefined;
  const cluster = keys?.cluster?.S;
  const service = keys?.service?.S;
  if (typeof cluster !== 'string' || typeof service !== 'string' || cluster === '' || service === '' || cluster.startsWith('#')) return undefined;
  return { cluster, service };
}

/** Records one stream record's history; returns what it wrote. */
async function recordOne(history: SpecHistory, record: DynamoDBRecord, now: Date): Promise<{ revisions: number; outcomes: number }> {
  const key = keyOf(record);
  if (!key) return { revisions: 0, outcomes: 0 };
  const oldImage = imageOf(record.dynamodb?.OldImage);
  const newImage = imageOf(record.dynamodb?.NewImage);
  const seconds = record.dynamodb?.ApproximateCreationDateTime;
  const at = typeof seconds === 'number' ? new Date(seconds * 1000) : now;
  let revisions = 0;
  let outcomes = 0;
  const removed = record.eventName === 'REMOVE';
  if (removed || record.eventName === 'INSERT' || !oldImage || !same(specOf(oldImage), specOf(newImage))) {
    if (await history.recordOutsideEdit(key, removed ? undefined : specOf(newImage), at)) revisions += 1;
  }
  const status = statusOf(newImage);
  if (status && !same(oldImage?.status, newImage?.status)) {
    for (const hash of new Set([status.specHash, status.failedSpecHash].filter((h): h is string => typeof h === 'string'))) {
      const outcome = outcomeOf(status, hash);
      if (outcome && outcome.kind !== 'in-progress' && (await history.recordOutcome(key, hash, outcome)) !== undefined) outcomes += 1;
    }
  }
  return { revisions, outcomes };
}

/**
 * Records the history of a batch of stream records of the specs table `tableName` (in order:
 * records of one item arrive in the order of its writes). Never throws.
 */
export async function recordStreamHistory(
  doc: DynamoDBDocumentClient,
  tableName: string,
  records: readonly DynamoDBRecord[],
  log: LogPort,
  now: Date = new Date(),
): Promise<StreamHistorySummary> {
  const history = new SpecHistory(doc, tableName);
  let revisions = 0;
  let outcomes = 0;
  let failed = 0;
  for (const record of records) {
    try {
      const r = await recordOne(history, record, now);
      revisions += r.revisions;
      outcomes += r.outcomes;
    } catch (err) {
      failed += 1;
      log.warn('spec history: a stream record was not recorded', { eventID: record.eventID, error: errorMessage(err) });
    }
  }
  return { revisions, outcomes, failed };
}
