/**
 * The control endpoint, outside the ECS protocol: `POST /_sim/<command>` with a JSON body, and
 * `GET /_sim/state`, `/_sim/calls`, `/_sim/call-counts`, `/_sim/failure-rules`, `/_sim/faults`,
 * `/_sim/control-log`, `/_sim/listener-rules`. It does what a person does by hand (stop tasks, change a service out of
 * band, switch failure modes) and what a test or demo needs (advance the clock, throttling,
 * latency, faults, reset). Control commands are never recorded as ECS API calls.
 */
import { z } from 'zod';
import { faultSpecSchema } from './calls';
import type { SimulatedEcs } from './ecs';
import { EcsApiError } from './errors';
import { failureRuleSchema } from './failure-modes';

export interface ControlResponse {
  readonly status: number;
  readonly body: unknown;
}

const serviceRef = { cluster: z.string().optional(), service: z.string().min(1) };

const commands = {
  advance: {
    schema: z.object({ seconds: z.number().nonnegative() }),
    run: (sim: SimulatedEcs, a: { seconds: number }) => ({ now: sim.advance(a.seconds).toISOString() }),
  },
  'stop-task': {
    schema: z.object({ cluster: z.string().optional(), task: z.string().min(1), reason: z.string().optional() }),
    run: (sim: SimulatedEcs, a: { cluster?: string; task: string; reason?: string }) => sim.stopTask(a),
  },
  'stop-service-tasks': {
    schema: z.object({ ...serviceRef, reason: z.string().optional() }),
    run: (sim: SimulatedEcs, a: { cluster?: string; service: string; reason?: string }) => sim.stopServiceTasks(a),
  },
  'set-desired-count': {
    schema: z.object({ ...serviceRef, desiredCount: z.number().int().nonnegative() }),
    run: (sim: SimulatedEcs, a: { cluster?: string; service: string; desiredCount: number }) => {
      sim.setDesiredCount(a);
      return {};
    },
  },
  'set-task-definition': {
    schema: z.object({ ...serviceRef, taskDefinition: z.string().min(1) }),
    run: (sim: SimulatedEcs, a: { cluster?: string; service: string; taskDefinition: string }) => sim.setTaskDefinition(a),
  },
  'failure-rules': {
    schema: z.object({ rules: z.array(failureRuleSchema), prepend: z.boolean().optional() }),
    run: (sim: SimulatedEcs, a: { rules: z.infer<typeof failureRuleSchema>[]; prepend?: boolean }) => {
      sim.setFailureRules(a.rules, { prepend: a.prepend });
      return { rules: sim.failureRules() };
    },
  },
  'reset-failure-rules': {
    schema: z.object({}),
    run: (sim: SimulatedEcs) => {
      sim.resetFailureRules();
      return { rules: sim.failureRules() };
    },
  },
  'interrupt-spot': {
    schema: z.object({ cluster: z.string().optional(), service: z.string().optional() }),
    run: (sim: SimulatedEcs, a: { cluster?: string; service?: string }) => sim.interruptSpot(a),
  },
  vpc: {
    // The subnets and security groups that exist; an empty body goes back to taking every id.
    schema: z.object({ subnets: z.array(z.string().min(1)).optional(), securityGroups: z.array(z.string().min(1)).default([]) }),
    run: (sim: SimulatedEcs, a: { subnets?: string[]; securityGroups: string[] }) => {
      sim.setVpc(a.subnets === undefined ? undefined : { subnets: a.subnets, securityGroups: a.securityGroups });
      return { vpc: sim.vpcState() ?? null };
    },
  },
  'lifecycle-hook': {
    // What a hook target does: scripted answers (the last repeats) or an HTTP endpoint to POST to.
    schema: z.union([
      z.object({
        hookTargetArn: z.string().min(1),
        answers: z.array(z.object({ hookStatus: z.string(), callBackDelay: z.number().nonnegative().optional(), hookDetails: z.unknown().optional() })).min(1),
      }),
      z.object({ hookTargetArn: z.string().min(1), url: z.string().url() }),
    ]),
    run: (sim: SimulatedEcs, a: { hookTargetArn: string; answers?: { hookStatus: string }[]; url?: string }) => {
      sim.setHookTarget(a.hookTargetArn, a.url !== undefined ? { url: a.url } : { answers: (a.answers ?? []) as never });
      return {};
    },
  },
  alarm: {
    schema: z.object({ alarmName: z.string().min(1), state: z.enum(['OK', 'ALARM', 'INSUFFICIENT_DATA']) }),
    run: (sim: SimulatedEcs, a: { alarmName: string; state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA' }) => {
      sim.setAlarmState(a.alarmName, a.state);
      return {};
    },
  },
  throttling: {
    schema: z.object({ enabled: z.boolean() }),
    run: (sim: SimulatedEcs, a: { enabled: boolean }) => {
      sim.setThrottling(a.enabled);
      return { enabled: sim.throttling };
    },
  },
  latency: {
    schema: z.object({ ms: z.number().nonnegative() }),
    run: (sim: SimulatedEcs, a: { ms: number }) => {
      sim.setLatency(a.ms);
      return { ms: sim.latencyMs };
    },
  },
  faults: {
    schema: faultSpecSchema,
    run: (sim: SimulatedEcs, a: z.input<typeof faultSpecSchema>) => ({ id: sim.injectFault(a) }),
  },
  'clear-faults': {
    schema: z.object({}),
    run: (sim: SimulatedEcs) => {
      sim.clearFaults();
      return {};
    },
  },
  'clear-calls': {
    schema: z.object({}),
    run: (sim: SimulatedEcs) => {
      sim.clearCalls();
      return {};
    },
  },
  reset: {
    schema: z.object({}),
    run: (sim: SimulatedEcs) => {
      sim.reset();
      return {};
    },
  },
} as const;

type CommandName = keyof typeof commands;

/** Names of the POST commands (for help texts). */
export const CONTROL_COMMANDS = Object.keys(commands) as CommandName[];

/**
 * Handles one request under `/_sim/`. Never throws: bad input answers 400, unknown commands 404,
 * ECS errors (e.g. unknown service) 400 with the ECS error type.
 */
export function handleControl(sim: SimulatedEcs, method: string, path: string, query: URLSearchParams, body: unknown): ControlResponse {
  const name = path.replace(/^\/_sim\/?/, '').replace(/\/$/, '');
  try {
    if (method === 'GET') {
      switch (name) {
        case 'state':
          return ok(sim.snapshot());
        case 'calls': {
          const since = query.get('since');
          const sinceDate = since ? new Date(since) : undefined;
          if (sinceDate && Number.isNaN(sinceDate.getTime())) {
            return { status: 400, body: { error: 'InvalidInput', message: `since: must be an ISO 8601 time, got "${since}"` } };
          }
          return ok({
            calls: sim.calls({
              action: query.get('action') ?? undefined,
              outcome: query.get('outcome') ?? undefined,
              since: sinceDate,
            }),
          });
        }
        case 'call-counts':
          return ok({ counts: sim.callCounts() });
        case 'failure-rules':
          return ok({ rules: sim.failureRules() });
        case 'faults':
          return ok({ faults: sim.faults() });
        case 'control-log':
          return ok({ commands: sim.controlLog() });
        case 'listener-rules':
          return ok({ rules: sim.listenerRules() });
        case 'clock':
          return ok({ now: sim.clock.now().toISOString(), speed: sim.clock.speed ?? null });
        default:
          return notFound(name);
      }
    }
    if (method !== 'POST') return { status: 405, body: { error: 'MethodNotAllowed', message: 'Use GET or POST.' } };
    if (!Object.hasOwn(commands, name)) return notFound(name);
    const cmd = commands[name as CommandName];
    const parsed = cmd.schema.safeParse(body ?? {});
    if (!parsed.success) {
      return {
        status: 400,
        body: { error: 'InvalidInput', message: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') },
      };
    }
    return ok((cmd.run as (s: SimulatedEcs, a: unknown) => unknown)(sim, parsed.data));
  } catch (e) {
    if (e instanceof EcsApiError) return { status: e.status, body: { error: e.type, message: e.message } };
    if (e instanceof z.ZodError) return { status: 400, body: { error: 'InvalidInput', message: e.message } };
    // The simulator's own range checks (clock, latency) are about the input too.
    if (e instanceof RangeError) return { status: 400, body: { error: 'InvalidInput', message: e.message } };
    return { status: 500, body: { error: 'InternalError', message: e instanceof Error ? e.message : String(e) } };
  }
}

function ok(body: unknown): ControlResponse {
  return { status: 200, body };
}

function notFound(name: string): ControlResponse {
  return {
    status: 404,
    body: {
      error: 'UnknownCommand',
      message: `No control command "${name}". POST: ${CONTROL_COMMANDS.join(', ')}. GET: state, calls, call-counts, failure-rules, faults, control-log, listener-rules, clock.`,
    },
  };
}
