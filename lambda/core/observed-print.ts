/**
 * The digest of a live service: every value of an `ObservedService` that the planner's
 * comparison of a steady service reads, walked in a fixed order with markers of structure and
 * hashed. Two services with the same digest are the same to that comparison, so a status that
 * records the digest its judgement saw (`ServiceStatus.judged`) tells the next pass, in this
 * container or another, that the comparison would find the same again
 * (`./reconcile/steady.ts`). A new observation of an unchanged service (a new object every pass)
 * has the same digest; a change to any value the comparison reads gives another.
 *
 * Every member the `ObservedService` type declares is placed in {@link SERVICE_MEMBERS} (the
 * compiler refuses a new member until it is), but for the declared service fields, which are all
 * walked whole: walked whole (`print`: nested objects, arrays and Dates included), walked for the
 * members the comparison reads of it (`print: read fields`, e.g. a deployment's id, status, task
 * definition, rolloutState and declared fields), left to the status, which reads them itself
 * every pass (`events`, `stoppedTasks`), or read only by plans that act. Tags are walked whole,
 * keys and values. A value the walk cannot tell apart from another (an object other than a plain
 * object, array or Date, e.g. a Map, a function, a symbol, or `NaN`) leaves the service without a
 * digest: its judgement is never skipped.
 *
 * The ECS observer stamps each service it maps with its digest (`CompareCache.stamp` in
 * `./compare-cache.ts`), while the values are at hand and the pass waits on ECS anyway; the
 * planner then reads the stamp instead of walking the service. A stamp is trusted for the life of
 * the object: an observed service is never changed in place (docs/DECISIONS.md).
 *
 * A read of the live service added to the steady comparison (`diffService`, `planExisting`,
 * `unchangedFound`, `detectFailedRollout`) must be added here; `test/planner-steady-memo.test.ts`
 * changes every member one at a time and checks that the skip misses and the plan stays the full one.
 */
import { createHash } from 'node:crypto';
import { own } from './dict';
import type { ObservedDeployment, ObservedService } from './types';
import { SERVICE_FIELDS_ON_DEPLOYMENT, SERVICE_FIELDS_ON_SERVICE, type ServiceFieldObservedOn } from './vocab/service';

/**
 * Each declared member of a live service, and how the digest covers it: `print` (walked whole),
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

// Markers of structure: the walk is self-delimiting, so two different shapes never give the same text.
const OBJECT = '{';
const ARRAY = '[';
const DATE = 'D';
const END = '}';
const ABSENT = '-';

/**
 * Walks a service's compared values into a text, token by token (strings JSON-quoted, so no
 * token runs into the next). One walk per service: it holds no state between services.
 */
class PrintWalk {
  private readonly out: string[] = [];
  /** False once a value cannot be told apart from another. */
  private ok = true;

  /** The text of `svc`'s compared values, or undefined when it holds a value no walk tells apart. */
  text(svc: ObservedService): string | undefined {
    this.service(svc);
    return this.ok ? this.out.join(',') : undefined;
  }

  private put(x: unknown): void {
    switch (typeof x) {
      case 'string':
        this.out.push(JSON.stringify(x));
        return;
      case 'number':
        if (Number.isNaN(x)) this.ok = false;
        this.out.push(`n${x}`);
        return;
      case 'boolean':
        this.out.push(x ? 't' : 'f');
        return;
      case 'undefined':
        this.out.push('u');
        return;
      default:
        if (x === null) this.out.push('z');
        else this.ok = false;
    }
  }

  private mark(m: string): void {
    this.out.push(m);
  }

  /** A member that may be absent, or an object (then the object stands for its own read fields). */
  private has(x: unknown): boolean {
    if (x === undefined || x === null || typeof x !== 'object') {
      this.put(x);
      return false;
    }
    this.mark(OBJECT);
    return true;
  }

  /** A list of strings (subnets, security groups, alarm names), or any other value walked whole. */
  private strings(xs: unknown): void {
    if (!Array.isArray(xs)) {
      this.value(xs);
      return;
    }
    this.mark(ARRAY);
    this.put(xs.length);
    for (const x of xs) this.value(x);
  }

  /** An array whose objects are walked for their read fields by `each`, or any other value walked whole. */
  private list<T>(xs: readonly T[] | undefined, each: (x: T) => void): void {
    if (!Array.isArray(xs)) {
      this.value(xs);
      return;
    }
    this.mark(ARRAY);
    this.put(xs.length);
    for (const x of xs) if (this.has(x)) each(x);
  }

  private service(svc: ObservedService): void {
    this.put(svc.status);
    this.put(svc.desiredCount);
    this.put(svc.runningCount);
    this.put(svc.pendingCount);
    this.put(svc.taskDefinition);
    this.put(svc.launchType);
    this.mark(svc.serviceDeployments === undefined ? ABSENT : OBJECT);
    if (svc.serviceDeployments !== undefined) this.value(svc.serviceDeployments);
    this.put(svc.serviceDeploymentsError);
    this.list(svc.capacityProviderStrategy, (s) => {
      this.put(s.capacityProvider);
      this.put(s.weight);
      this.put(s.base);
    });
    this.deploymentConfiguration(svc.deploymentConfiguration);
    const controller = svc.deploymentController;
    if (this.has(controller)) this.put(controller?.type);
    this.network(svc.networkConfiguration);
    this.list(svc.loadBalancers, (l) => {
      this.put(l.targetGroupArn);
      this.put(l.containerName);
      this.put(l.containerPort);
    });
    this.list(svc.deployments, (d) => this.deployment(d));
    this.value(svc.tags);
    for (const k of GENERIC_SERVICE_MEMBERS) this.value(svc[k]);
  }

  private deploymentConfiguration(dep: ObservedService['deploymentConfiguration']): void {
    if (!this.has(dep)) return;
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

  private network(net: ObservedService['networkConfiguration']): void {
    if (!this.has(net)) return;
    const vpc = net?.awsvpcConfiguration;
    if (this.has(vpc)) {
      this.strings(vpc?.subnets);
      this.strings(vpc?.securityGroups);
      this.put(vpc?.assignPublicIp);
    }
  }

  private deployment(d: ObservedDeployment): void {
    this.put(d.id);
    this.put(d.status);
    this.put(d.taskDefinition);
    this.put(d.rolloutState);
    for (const k of GENERIC_DEPLOYMENT_MEMBERS) this.value(d[k]);
  }

  /** Any value: primitives as they are, plain objects, arrays and Dates walked, anything else not told apart. */
  private value(x: unknown): void {
    if (typeof x !== 'object' || x === null) {
      this.put(x);
      return;
    }
    if (Array.isArray(x)) {
      if (Object.getPrototypeOf(x) !== Array.prototype) {
        this.ok = false;
        return;
      }
      this.mark(ARRAY);
      this.put(x.length);
      for (const v of x) this.value(v);
      return;
    }
    const proto = Object.getPrototypeOf(x);
    if (proto === Date.prototype) {
      this.mark(DATE);
      this.put((x as Date).getTime());
      return;
    }
    if (proto !== Object.prototype && proto !== null) {
      this.ok = false;
      return;
    }
    this.mark(OBJECT);
    const o = x as Record<string, unknown>;
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      this.put(k);
      this.value(own(o, k));
    }
    this.mark(END);
  }
}

/**
 * The digest of the values of `svc` that the steady comparison reads (see the module doc): 22
 * base64url characters of a SHA-256, or undefined when `svc` holds a value no walk tells apart
 * (then no judgement of it is ever skipped). Pure; a walk and a hash per call, so the planner
 * reads the observer's stamp instead when there is one (`CompareCache`).
 */
export function serviceDigest(svc: ObservedService): string | undefined {
  const text = new PrintWalk().text(svc);
  return text === undefined ? undefined : createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
