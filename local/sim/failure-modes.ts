/**
 * Failure modes, chosen per image reference: what happens to a task whose container image matches
 * a rule. The first matching rule wins; rules can be added or replaced at run time (in-process or
 * `POST /_sim/failure-rules`). Defaults make demos easy: an image reference containing
 * `does-not-exist` or `unpullable` cannot be pulled, `crashloop` crash-loops, and so on
 * ({@link DEFAULT_FAILURE_RULES}).
 */
import { z } from 'zod';

export const FAILURE_MODES = [
  /** Normal task. */
  'ok',
  /** Image pull fails: STOPPED, stopCode TaskFailedToStart, "CannotPullContainerError: ...". */
  'pull-error',
  /** RUNNING for `runSeconds`, then the essential container exits with `exitCode` (default 1). */
  'crash-loop',
  /** RUNNING, container health check fails after its retries; the scheduler replaces the task. */
  'unhealthy',
  /** No Fargate capacity: the task is never placed; placement-failure service events. */
  'no-capacity',
  /** Stays PENDING for `pendingSeconds` (default 300) before RUNNING. */
  'slow-start',
  /** FARGATE_SPOT tasks are interrupted after `runSeconds` RUNNING (default 120). */
  'spot-interruption',
] as const;

export type FailureMode = (typeof FAILURE_MODES)[number];

export const failureRuleSchema = z.object({
  /**
   * Substring of the image reference; `*` matches any characters (a glob); `/.../` is a regular
   * expression.
   */
  match: z
    .string()
    .min(1)
    // Checked here, not when a task launches: a rule that cannot be compiled would otherwise be
    // installed and then fail every launch (and, on a scaled clock, the background timer).
    .refine((m) => !isRegexMatch(m) || compiles(m.slice(1, -1)), {
      message: 'is not a valid /regular expression/ (JavaScript syntax)',
    }),
  mode: z.enum(FAILURE_MODES),
  /** crash-loop / spot-interruption: seconds RUNNING before the stop. */
  runSeconds: z.number().nonnegative().optional(),
  /** slow-start: seconds PENDING. */
  pendingSeconds: z.number().nonnegative().optional(),
  /** crash-loop: exit code of the essential container (default 1). */
  exitCode: z.number().int().optional(),
  /** pull-error: stoppedReason to answer instead of the default CannotPullContainerError text. */
  reason: z.string().optional(),
});

export type FailureRule = z.infer<typeof failureRuleSchema>;

/** The conventions documented in docs/simulator.md ("Failure modes"). */
export const DEFAULT_FAILURE_RULES: readonly FailureRule[] = [
  { match: 'does-not-exist', mode: 'pull-error' },
  { match: 'unpullable', mode: 'pull-error' },
  { match: 'crashloop', mode: 'crash-loop' },
  { match: 'unhealthy', mode: 'unhealthy' },
  { match: 'no-capacity', mode: 'no-capacity' },
  { match: 'slow-start', mode: 'slow-start' },
  { match: 'spot-interrupt', mode: 'spot-interruption' },
];

/** True when `image` matches the rule's `match` (substring, `*` glob, or `/regex/`). */
export function ruleMatches(match: string, image: string): boolean {
  if (isRegexMatch(match)) {
    return new RegExp(match.slice(1, -1)).test(image);
  }
  if (match.includes('*')) {
    const re = new RegExp(`^${match.split('*').map(escapeRegExp).join('.*')}$`);
    return re.test(image);
  }
  return image.includes(match);
}

/** `/.../`: the rule's `match` is a regular expression. */
function isRegexMatch(match: string): boolean {
  return match.length > 2 && match.startsWith('/') && match.endsWith('/');
}

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The effective rule for one image: the first that matches, or `ok`. */
export function ruleFor(rules: readonly FailureRule[], image: string): FailureRule {
  return rules.find((r) => ruleMatches(r.match, image)) ?? { match: '*', mode: 'ok' };
}

/**
 * The rule deciding a task's fate from its containers' images: the first essential container
 * whose image matches a non-`ok` rule; else the first non-essential container whose image
 * crash-loops (only that container exits: a non-essential container's exit does not stop the
 * task); else `ok`.
 */
export function ruleForTask(
  rules: readonly FailureRule[],
  containers: readonly { image?: string; essential?: boolean }[],
): { rule: FailureRule; image: string } {
  for (const c of containers) {
    if (c.essential === false || !c.image) continue;
    const rule = ruleFor(rules, c.image);
    if (rule.mode !== 'ok') return { rule, image: c.image };
  }
  for (const c of containers) {
    if (c.essential !== false || !c.image) continue;
    const rule = ruleFor(rules, c.image);
    if (rule.mode === 'crash-loop') return { rule, image: c.image };
  }
  return { rule: { match: '*', mode: 'ok' }, image: containers[0]?.image ?? '' };
}
