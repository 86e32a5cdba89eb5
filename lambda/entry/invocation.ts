/**
 * What every entry point takes from the Lambda invocation: its deadline (how long a pass may run
 * and hold its lease), and the reconciler's own account and Region (the default target's place).
 */
import type { Context } from 'aws-lambda';
import { accountOfArn, type HomeAccount } from '../core/event-routing';
import type { Wiring } from './wiring';

/** Milliseconds of invocation time kept in reserve: no new action starts with less left. */
export const RESERVE_MS = 10_000;
/** Seconds added to the remaining invocation time for the lease lifetime. */
export const LEASE_MARGIN_SECONDS = 5;

/** One invocation: its context and the time it had left when the handler was called (ms). */
export interface Invocation {
  readonly context: Context;
  readonly startRemainingMs: number;
}

/** The lease and deadline options of a pass run by `holder` inside this invocation. */
export function passTiming(inv: Invocation, holder: string = inv.context.awsRequestId) {
  const { context } = inv;
  return {
    holder,
    leaseTtlSeconds: Math.ceil(inv.startRemainingMs / 1000) + LEASE_MARGIN_SECONDS,
    shouldContinue: () => context.getRemainingTimeInMillis() >= RESERVE_MS,
    remainingMs: () => context.getRemainingTimeInMillis(),
  };
}

/** The reconciler's own account (the function's ARN) and Region: the default target's place. */
export function homeOf(w: Wiring, inv: Invocation): HomeAccount {
  return { account: accountOfArn(inv.context.invokedFunctionArn), region: w.config.plan.defaults.region };
}
