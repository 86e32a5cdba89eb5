/**
 * Label selectors over a spec's `tags`, as `kubectl get -l` reads them over labels
 * (Kubernetes "Labels and Selectors", equality-based requirements): comma-separated requirements,
 * all of which must hold: `key=value` (or `key==value`), `key!=value` (true also when the tag is
 * missing), `key` (the tag exists) and `!key` (it does not).
 */
import { InvalidArgumentError } from 'commander';
import { own } from '../../../lambda/core/dict';

/** One requirement of a selector. */
export type Requirement =
  | { readonly op: 'equals' | 'notEquals'; readonly key: string; readonly value: string }
  | { readonly op: 'exists' | 'notExists'; readonly key: string };

/** Tag keys and values as the spec allows them (ECS tag characters). */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@ ]*$/u;

/**
 * The requirements of `text` (`team=payments,tier!=batch,!legacy`).
 * @throws InvalidArgumentError naming the requirement that does not parse.
 */
export function parseSelector(text: string): Requirement[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw new InvalidArgumentError(`"${text}" has an empty requirement; write key=value, key!=value, key or !key, separated by commas.`);
  return parts.map((part) => {
    const m = /^([^=!]+?)\s*(==|!=|=)\s*(.*)$/.exec(part);
    const req: Requirement = m
      ? { op: m[2] === '!=' ? 'notEquals' : 'equals', key: m[1].trim(), value: m[3] }
      : part.startsWith('!')
        ? { op: 'notExists', key: part.slice(1).trim() }
        : { op: 'exists', key: part };
    if (req.key === '' || /[=!]/.test(req.key) || !TAG_TEXT.test(req.key) || ('value' in req && !TAG_TEXT.test(req.value))) {
      throw new InvalidArgumentError(`"${part}" is not a requirement on a tag; write key=value, key!=value, key or !key.`);
    }
    return req;
  });
}

/** Whether `tags` (a spec's, or none) meets every requirement. */
export function matchesSelector(tags: Readonly<Record<string, string>> | undefined, requirements: readonly Requirement[]): boolean {
  return requirements.every((r) => {
    const v = own(tags, r.key);
    if (r.op === 'equals') return v === r.value;
    if (r.op === 'notEquals') return v !== r.value;
    if (r.op === 'exists') return v !== undefined;
    return v === undefined;
  });
}
