/** Texts the planner puts into statuses and action reasons. */
import { OWNER_TAG_KEY } from '../ports';
import { describeChange } from '../status';
import type { FieldChange, ServiceSpec, SpecError } from '../types';

const MAX_CHANGES_IN_MESSAGE = 8;

/** Changes in words, at most 8 ("... and N more"). */
export function changesText(changes: readonly FieldChange[]): string {
  const shown = changes.slice(0, MAX_CHANGES_IN_MESSAGE).map(describeChange).join(', ');
  const more = changes.length - MAX_CHANGES_IN_MESSAGE;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** At most this many of an invalid spec's errors go into its status message. */
const MAX_ERRORS_IN_MESSAGE = 20;
/** Each error in a status message is cut to this many characters. */
const MAX_ERROR_CHARS = 400;

/**
 * An invalid spec's errors as one message, bounded (at most 20 errors of 400 characters, about
 * 8 KB; the message is stored twice in the status) so that the status always fits the 32 KiB that
 * the spec size limit leaves for it (docs/spec.md). The rest are counted: "... and N more".
 * The pass summary reports invalid items with the same text.
 */
export function specErrorsText(errors: SpecError[]): string {
  const cut = (t: string) => (t.length > MAX_ERROR_CHARS ? `${t.slice(0, MAX_ERROR_CHARS - 1)}…` : t);
  const shown = errors.slice(0, MAX_ERRORS_IN_MESSAGE).map((e) => cut(`${e.path || '(item)'}: ${e.message}`)).join('; ');
  const more = errors.length - MAX_ERRORS_IN_MESSAGE;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

/** The spec's service tags plus our owner tag, sorted by key (CreateService, adoption). */
export function serviceTags(spec: ServiceSpec, ownerId: string): { key: string; value: string }[] {
  return Object.entries({ ...spec.tags, [OWNER_TAG_KEY]: ownerId })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
}
