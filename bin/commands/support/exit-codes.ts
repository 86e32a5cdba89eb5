/**
 * Exit codes of `ecsr` (documented in docs/cli.md, "The `ecsr` command line"). A module of its own,
 * importing nothing, so that `bin/ecsr.ts` has them without loading what `errors.ts` imports.
 */
export const EXIT = {
  ok: 0,
  /** A command failed: bad input, an AWS error, a failed rollout, a failed expectation. */
  failed: 1,
  /** `apply --wait` / `delete --wait` ran out of time; `diff`/`plan --exit-code` found changes. */
  timeoutOrChanges: 2,
} as const;
