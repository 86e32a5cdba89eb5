/**
 * The print of a live service: every value of an `ObservedService` that the planner's
 * comparison of a steady service reads, as a flat list of primitives with markers of structure,
 * recorded once and checked on later passes by `===`, value by value, without building anything.
 * Two services with the same print are the same to that comparison, so its result can be
 * remembered (`./compare-memo`, `steadyComparisonOf`). A new observation of an unchanged service
 * (a new object every pass) has the same print; the same object changed in place has another.
 *
 * Every member the `ObservedService` type declares is placed in {@link SERVICE_MEMBERS} (the
 * compiler refuses a new member until it is), but for the declared service fields, which are all
 * walked whole: walked whole (`print`: nested objects, arrays and Dates included),
 * walked for the members the comparison reads of it (`print: read fields`, e.g. a deployment's
 * id, status, task definition, rolloutState and declared fields; the tags of the spec's keys and
 * the owner tag, not the tags a person added by hand), left to the status, which reads
 * them itself every pass (`events`, `stoppedTasks`), or read only by plans that act. A value the
 * print cannot tell apart from another (an object other than a plain object, array or Date, e.g.
 * a Map) makes the service unprintable: its comparison is never remembered. `NaN` never matches.
 *
 * The ECS observer stamps each service it maps with its print ({@link stampObservedService}, every
 * tag included), while the values are at hand; the memo then compares two stamps instead of
 * walking the service. A stamp is trusted for the life of the object: an observed service is never
 * changed in place (docs/DECISIONS.md); anything else is walked.
 *
 * A read of the live service added to the steady comparison (`diffService`, `planExisting`,
 * `unchangedFound`, `detectFailedRollout`) must be added here; `test/planner-steady-memo.test.ts`
 * changes every member one at a time and checks that the memo misses and the plan stays the full one.
 */
import { own } from './dict';
import { eventReason } from './status';
import type { ObservedDeployment, ObservedService } from './types';
import { SERVICE_FIELDS_ON_DEPLOYMENT, SERVICE_FIELDS_ON_SERVICE, type ServiceFieldObservedOn } from './vocab/service';

/**
 * Each declared member of a live service, and how the print covers it: `print` (walked whole),
 * `print: read fields` (the members of it the comparison reads, listed in {@link PrintWalk}),
 * `status reads it` (the status reads it itself every pass), or `acting path only` (read only by
 * plans that act or refuse, never by a steady comparison). A member added to `ObservedService`
 * does not compile until it is placed here; a read added to the steady comparison must be added
 * to the walk (the equivalence tests in `test/planner-steady-memo.test.ts` vary every member).
 */
export const SERVICE_MEMBERS: Readonly<
  Record<Exclude<keyof ObservedService, ServiceFieldObservedOn<'service'>>, 'print' | 'print: read fields' | 'status reads it' | 'acting path only'>
> = {
  serviceArn: 'acting path only',
  serviceName: 'acting path only',
  clusterArn: 'acting path only',
  createdAt: 'acting path only',
  status: 'print',
  desiredCount: 'print',
  runningCount: 'print',
  pendingCount: 'print',
  taskDefinition: 'print',
  launchType: 'print',
  resourceManagementType: 'print',
  capacityProviderStrategy: 'print: read fields',
  deploymentConfiguration: 'print: read fields',
  deploymentController: 'print: read fields',
  networkConfiguration: 'print: read fields',
  loadBalancers: 'print: read fields',
  deployments: 'print: read fields',
  tags: 'print: read fields',
  serviceDeployments: 'print',
  serviceDeploymentsError: 'print',
  currentServiceDeployment: 'print',
  events: 'status reads it',
  stoppedTasks: 'status reads it',
};

/**
 * Service members walked generically: those marked `print` but not read by name in the walk, and
 * every declared service field (`SERVICE_FIELDS_ON_SERVICE`, always printed whole: the walk over
 * the declarations is what keeps a new field from being left out).
 */
const GENERIC_SERVICE_MEMBERS: readonly (keyof ObservedService)[] = (() => {
  const byName = new Set<keyof ObservedService>([
    'status',
    'desiredCount',
    'runningCount',
    'pendingCount',
    'taskDefinition',
    'launchType',
    'tags',
    'serviceDeployments',
    'serviceDeploymentsError',
  ]);
  const out: (keyof ObservedService)[] = [];
  for (const [k, how] of Object.entries(SERVICE_MEMBERS) as [keyof ObservedService, string][]) if (how === 'print' && !byName.has(k)) out.push(k);
  for (const k of SERVICE_FIELDS_ON_SERVICE) if (!out.includes(k)) out.push(k);
  return out;
})();

/** Deployment members walked generically: the declared service fields ECS reports on a deployment. */
const GENERIC_DEPLOYMENT_MEMBERS: readonly (keyof ObservedDeployment)[] = SERVICE_FIELDS_ON_DEPLOYMENT;

// Markers of structure: a print is self-delimiting, so two different shapes never give the same list.
const OBJECT = Symbol('object');
const ARRAY = Symbol('array');
const DATE = Symbol('date');
const END = Symbol('end');
const ABSENT = Symbol('absent');

/** A recorded print: the values in walk order. */
export type ObservedPrint = readonly unknown[];

/**
 * Walks a service's printed values, either recording them (`record`) or checking them against a
 * recorded print (`check`). One object reused for every service of a plan.
 */
class PrintWalk {
  /** Scratch array of a recording (reused by every walk) and how many values it holds. */
  private readonly out: unknown[] = [];
  private size = 0;
  private expected: ObservedPrint = [];
  private at = 0;
  private checking = false;
  /** False once a value differs (checking) or cannot be printed. */
  private ok = true;

  /** The tag keys whose values are printed (set for each walk); undefined: every tag, keys and values. */
  private tagKeys: readonly string[] | undefined = [];

  /** The print of `svc`, or undefined when it holds a value the print cannot tell apart. */
  record(svc: ObservedService, tagKeys: readonly string[] | undefined): ObservedPrint | undefined {
    this.tagKeys = tagKeys;
    this.size = 0;
    this.checking = false;
    this.ok = true;
    this.service(svc);
    // The values were written to a scratch array reused by every walk: one copy of the right size.
    const out = this.ok ? this.out.slice(0, this.size) : undefined;
    this.out.fill(undefined, 0, this.size);
    return out;
  }

  /** Whether `svc`'s print is `expected`. */
  check(svc: ObservedService, expected: ObservedPrint, tagKeys: readonly string[]): boolean {
    this.tagKeys = tagKeys;
    this.expected = expected;
    this.at = 0;
    this.checking = true;
    this.ok = true;
    this.service(svc);
    const same = this.ok && this.at === expected.length;
    this.expected = [];
    return same;
  }

  private put(x: unknown): void {
    if (this.checking) {
      if (this.expected[this.at++] !== x) this.ok = false;
    } else this.out[this.size++] = x;
  }

  /** A member that may be absent, or an object (then the object stands for its own read fields). */
  private has(x: unknown): boolean {
    if (x === undefined || x === null) {
      this.put(x);
      return false;
    }
    if (typeof x !== 'object') {
      this.put(x);
      return false;
    }
    this.put(OBJECT);
    return true;
  }

  /** A list of strings (subnets, security groups, alarm names), or any other value walked whole. */
  private strings(xs: unknown): void {
    if (!Array.isArray(xs)) {
      this.value(xs);
      return;
    }
    this.put(ARRAY);
    this.put(xs.length);
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i];
      if (typeof x === 'string') this.put(x);
      else this.value(x);
    }
  }

  private service(svc: ObservedService): void {
    this.put(svc.status);
    this.put(svc.desiredCount);
    this.put(svc.runningCount);
    this.put(svc.pendingCount);
    this.put(svc.taskDefinition);
    this.put(svc.launchType);
    this.put(svc.serviceDeployments === undefined ? ABSENT : OBJECT);
    if (svc.serviceDeployments !== undefined) this.value(svc.serviceDeployments);
    this.put(svc.serviceDeploymentsError);

    const strategy = svc.capacityProviderStrategy;
    if (Array.isArray(strategy)) {
      this.put(ARRAY);
      this.put(strategy.length);
      for (let i = 0; i < strategy.length; i++) {
        const s = strategy[i];
        if (this.has(s)) {
          this.put(s.capacityProvider);
          this.put(s.weight);
          this.put(s.base);
        }
      }
    } else this.value(strategy);

    const dep = svc.deploymentConfiguration;
    if (this.has(dep)) {
      const d = dep as NonNullable<ObservedService['deploymentConfiguration']>;
      this.put(d.minimumHealthyPercent);
      this.put(d.maximumPercent);
      const breaker = d.deploymentCircuitBreaker;
      if (this.has(breaker)) {
        this.put(breaker?.enable);
        this.put(breaker?.rollback);
      }
      const alarms = d.alarms;
      if (this.has(alarms)) {
        this.strings(alarms?.alarmNames);
        this.put(alarms?.enable);
        this.put(alarms?.rollback);
      }
    }

    const controller = svc.deploymentController;
    if (this.has(controller)) this.put(controller?.type);

    const net = svc.networkConfiguration;
    if (this.has(net)) {
      const vpc = net?.awsvpcConfiguration;
      if (this.has(vpc)) {
        this.strings(vpc?.subnets);
        this.strings(vpc?.securityGroups);
        this.put(vpc?.assignPublicIp);
      }
    }

    const lbs = svc.loadBalancers;
    if (Array.isArray(lbs)) {
      this.put(ARRAY);
      this.put(lbs.length);
      for (let i = 0; i < lbs.length; i++) {
        const l = lbs[i];
        if (this.has(l)) {
          this.put(l.targetGroupArn);
          this.put(l.containerName);
          this.put(l.containerPort);
        }
      }
    } else this.value(lbs);

    const ds = svc.deployments;
    if (Array.isArray(ds)) {
      this.put(ARRAY);
      this.put(ds.length);
      for (let i = 0; i < ds.length; i++) {
        const d = ds[i];
        if (this.has(d)) {
          this.put(d.id);
          this.put(d.status);
          this.put(d.taskDefinition);
          this.put(d.rolloutState);
          for (let j = 0; j < GENERIC_DEPLOYMENT_MEMBERS.length; j++) this.value(d[GENERIC_DEPLOYMENT_MEMBERS[j]]);
        }
      }
    } else this.value(ds);

    // Tags: the values of the keys the comparison reads (the spec's and the owner tag), looked up
    // one by one (tags a person added by hand are never read; a dictionary is not walked).
    // A stamp (no tag keys given) holds every tag, keys and values.
    const tags = svc.tags;
    const tagKeys = this.tagKeys;
    if (tagKeys === undefined) this.value(tags);
    else if (this.has(tags)) for (let i = 0; i < tagKeys.length; i++) this.value(own(tags, tagKeys[i]));

    for (let i = 0; i < GENERIC_SERVICE_MEMBERS.length; i++) this.value(svc[GENERIC_SERVICE_MEMBERS[i]]);
  }

  /** Any value: primitives as they are, plain objects, arrays and Dates walked, anything else unprintable. */
  private value(x: unknown): void {
    if (typeof x !== 'object' || x === null) {
      // A function has no print; a symbol may not be ours to compare.
      if (typeof x === 'function' || typeof x === 'symbol') this.ok = false;
      this.put(x);
      return;
    }
    if (Array.isArray(x)) {
      if (Object.getPrototypeOf(x) !== Array.prototype) {
        this.ok = false;
        return;
      }
      this.put(ARRAY);
      this.put(x.length);
      for (let i = 0; i < x.length; i++) this.value(x[i]);
      return;
    }
    const proto = Object.getPrototypeOf(x);
    if (proto === Date.prototype) {
      this.put(DATE);
      this.put((x as Date).getTime());
      return;
    }
    if (proto !== Object.prototype && proto !== null) {
      this.ok = false;
      return;
    }
    this.put(OBJECT);
    const o = x as Record<string, unknown>;
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      this.put(k);
      this.value(own(o, k));
    }
    this.put(END);
  }
}

const walk = new PrintWalk();

// -----------------------------------------------------------------------------------------------
// Stamps: the print made by the observer, when it builds the service
// -----------------------------------------------------------------------------------------------

/** What a stamp holds: the service's print, and its newest event that explains something. */
interface Stamp {
  readonly print: ObservedPrint;
  readonly eventReason: string | undefined;
}

/** Stamps of live services (see {@link stampObservedService}). */
const stamps = new WeakMap<ObservedService, Stamp>();

/** The service asked last and its stamp: the planner asks for one service's stamp twice in a row (its print, then its event reason). */
let lastAsked: ObservedService | undefined;
let lastStamp: Stamp | undefined;

function stampEntry(svc: ObservedService): Stamp | undefined {
  if (svc !== lastAsked) {
    lastStamp = stamps.get(svc);
    lastAsked = svc;
  }
  return lastStamp;
}

/**
 * Stamps a live service with its print, made once by the observer as it builds the service
 * (`observedAndStamped` in the ECS observer), while its values are at hand and the pass waits on
 * ECS anyway: every member a walk prints ({@link livePrintOf}), with every tag (keys and values)
 * instead of the spec's. The planner then tells a stamped service from a remembered one by
 * comparing two flat lists of values ({@link sameLivePrint}) instead of walking the service's objects
 * when it plans, which is CPU on the pass's critical path.
 *
 * A stamp is trusted as long as the service lives: a service is never changed in place once
 * observed (a pass copies one to add to it, as `{ ...svc, serviceDeployments }`, and a copy has no
 * stamp), as a task definition description is never changed in place (docs/DECISIONS.md).
 * The members the status reads itself (`events`, `stoppedTasks`) are not in the print, so the
 * observer may still add stopped tasks. A service holding a value the print cannot tell apart
 * (see the module doc) gets no stamp: the planner walks it.
 * @returns whether `svc` was stamped (false also when it already was).
 */
export function stampObservedService(svc: ObservedService): boolean {
  if (stamps.has(svc)) return false;
  const print = walk.record(svc, undefined);
  // A NaN never matches, not even itself: such a service is walked every plan (a stamp compared
  // with itself would match).
  if (print === undefined || print.some(Number.isNaN)) return false;
  stamps.set(svc, { print, eventReason: eventReason(svc) });
  if (svc === lastAsked) lastAsked = undefined;
  return true;
}

/** The stamped print of `svc` ({@link stampObservedService}), or undefined when it has none. */
export function stampOf(svc: ObservedService): ObservedPrint | undefined {
  return stampEntry(svc)?.print;
}

/**
 * `eventReason(svc)` (`./status`: the newest service event that is not a steady-state message),
 * found when the service was stamped, while its events were at hand; computed now for a service
 * without a stamp. (Stopped tasks, which the observer adds after stamping, are read by the status
 * itself.)
 */
export function eventReasonOf(svc: ObservedService | undefined): string | undefined {
  if (svc === undefined) return undefined;
  const stamp = stampEntry(svc);
  return stamp !== undefined ? stamp.eventReason : eventReason(svc);
}

/** Whether two stamps hold the same values, each `===` the other's (so `NaN` never matches, as in a walk). */
function sameStamp(a: ObservedPrint, b: ObservedPrint): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A live service's print as a memo keeps it: its stamp when the observer stamped it, else the
 * walked values and the tag keys whose values they hold. A stamp never stands for a walked print,
 * nor the other way round.
 */
export type LivePrint = { readonly stamp: ObservedPrint } | { readonly values: ObservedPrint; readonly tagKeys: readonly string[] };

/**
 * The print of `svc` to keep ({@link LivePrint}): its stamp, or a walk of it reading the values of
 * `tagKeys` (the owner tag and the spec's); undefined when it holds a value no print tells apart.
 */
export function livePrintOf(svc: ObservedService, tagKeys: readonly string[]): LivePrint | undefined {
  const stamp = stampOf(svc);
  if (stamp !== undefined) return { stamp };
  const values = walk.record(svc, tagKeys);
  return values === undefined ? undefined : { values, tagKeys };
}

/** Whether `svc` has the kept print `kept`: stamp against stamp, or a walk of `svc` against walked values. */
export function sameLivePrint(svc: ObservedService, kept: LivePrint): boolean {
  const stamp = stampOf(svc);
  if (stamp !== undefined) return 'stamp' in kept && sameStamp(kept.stamp, stamp);
  return 'values' in kept && walk.check(svc, kept.values, kept.tagKeys);
}
