/**
 * Named rules across fields of a spec that speaks ECS (containers, volumes, load balancers,
 * Service Connect, EBS volume configurations): what ECS or Fargate would refuse at
 * RegisterTaskDefinition or CreateService, found before any call. Each rule reads the raw item
 * defensively (the rules run even when single fields are invalid, so that every error of an item
 * comes out at once) and reports a path such as `containers[1].dependsOn[0].containerName`, the
 * bad value and what is allowed.
 *
 * Sources: Amazon ECS API reference (ContainerDefinition, ContainerDependency, PortMapping,
 * LoadBalancer, ServiceConnectService, ServiceVolumeConfiguration, CapacityProviderStrategyItem)
 * and the Developer Guide (FireLens, "Amazon ECS task definition parameters for Fargate").
 */

import { checkDeploymentRules } from './deployment-rules';

export type Issue = (path: (string | number)[], message: string, input?: unknown) => void;

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Set) && !(v instanceof Map) ? (v as Record<string, unknown>) : undefined;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The attributes of the shorthand that describe the container named after the service. */
export const SHORTHAND_CONTAINER_ATTRIBUTES = ['image', 'containerPort', 'command', 'healthCheck', 'environment', 'secrets'] as const;

/** A container of the task as the rules see it: listed (with its index) or the shorthand's. */
interface ContainerView {
  readonly name: string;
  readonly index?: number;
  readonly raw: Record<string, unknown>;
  readonly essential: boolean;
}

function containerViews(raw: Record<string, unknown>): ContainerView[] {
  const out: ContainerView[] = [];
  const service = str(raw.service);
  if (raw.image !== undefined && service) {
    const ports = num(raw.containerPort) !== undefined ? [{ containerPort: raw.containerPort }] : [];
    out.push({ name: service, raw: { name: service, portMappings: ports }, essential: true });
  }
  arr(raw.containers).forEach((c, index) => {
    const r = rec(c);
    if (!r) return;
    out.push({ name: str(r.name) ?? '', index, raw: r, essential: r.essential !== false });
  });
  return out;
}

const at = (c: ContainerView, ...rest: (string | number)[]): (string | number)[] =>
  c.index === undefined ? rest : ['containers', c.index, ...rest];

/** What every rule reads: the raw item, its containers and their ports, and where issues go. */
interface RuleContext {
  readonly raw: Record<string, unknown>;
  readonly containers: readonly ContainerView[];
  readonly byName: ReadonlyMap<string, ContainerView>;
  readonly issue: Issue;
}

/** The task's named ports (name -> container) and each container's container ports. */
interface TaskPorts {
  readonly portNames: ReadonlyMap<string, string>;
  readonly portsOf: ReadonlyMap<string, ReadonlySet<number>>;
}

/**
 * Every cross-field rule of the ECS vocabulary, run on the raw item. `taskCpu` and `taskMemory`
 * are the task size in effect (the shorthand's, defaults applied).
 */
export function checkVocabularyRules(raw: Record<string, unknown>, taskCpu: number, taskMemory: number, issue: Issue): void {
  const containers = containerViews(raw);
  checkShorthandAndList(raw, issue);
  checkContainerNames(containers, issue);
  const ctx: RuleContext = { raw, containers, byName: new Map(containers.map((c) => [c.name, c])), issue };
  if (containers.length > 0 && !containers.some((c) => c.essential)) {
    issue(['containers'], 'must have at least one essential container (ECS: a task needs one), got none essential', raw.containers);
  }
  if (containers.length > 10) {
    issue(['containers'], `must hold at most 10 containers in all (ECS task definition limit), got ${containers.length}`, raw.containers);
  }
  checkDependencies(ctx);
  const ports = checkPortNames(ctx);
  checkTaskSize(ctx, taskCpu, taskMemory);
  checkFireLens(ctx);
  checkVolumes(ctx);
  checkLoadBalancers(ctx, ports);
  checkNamedPortUses(ctx, ports);
  checkCapacity(ctx);
  checkDeploymentRules(raw, issue);
}

/** The shorthand and the list: one container, one place. */
function checkShorthandAndList(raw: Record<string, unknown>, issue: Issue): void {
  const listed = raw.containers !== undefined;
  const service = str(raw.service);
  if (listed) {
    const named = arr(raw.containers).findIndex((c) => str(rec(c)?.name) === service);
    if (raw.image !== undefined && named >= 0) {
      issue(
        ['containers', named, 'name'],
        `must not be "${service}" while image is set: the shorthand (image, containerPort, command, ...) already describes the container named after the service; move those attributes into this entry, or rename it`,
        service,
      );
    }
    if (raw.image === undefined) {
      for (const attr of SHORTHAND_CONTAINER_ATTRIBUTES) {
        const v = raw[attr];
        const empty = v === undefined || (rec(v) !== undefined && Object.keys(rec(v) ?? {}).length === 0);
        if (!empty) {
          issue(
            [attr],
            `belongs to the shorthand container, which exists only with image; with containers and no image, set it on a container (${attr === 'containerPort' ? 'portMappings' : attr === 'environment' || attr === 'secrets' ? `${attr} as [{name, ...}]` : attr})`,
            v,
          );
        }
      }
    }
  }
}

/** Container names are unique (RegisterTaskDefinition: "Duplicate container name"). */
function checkContainerNames(containers: readonly ContainerView[], issue: Issue): void {
  const seen = new Map<string, ContainerView>();
  for (const c of containers) {
    if (c.name === '') continue;
    if (seen.has(c.name) && c.index !== undefined) {
      issue(at(c, 'name'), `must be unique among the task's containers, got "${c.name}" twice`, c.name);
    }
    seen.set(c.name, c);
  }
}

/** dependsOn names a container of the task; COMPLETE and SUCCESS only on non-essential ones. */
function checkDependencies({ raw, containers, byName, issue }: RuleContext): void {
  for (const c of containers) {
    arr(c.raw.dependsOn).forEach((d, j) => {
      const dep = rec(d);
      const target = str(dep?.containerName);
      if (target === undefined) return;
      const other = byName.get(target);
      if (!other) {
        issue(at(c, 'dependsOn', j, 'containerName'), `must name a container of the task (${[...byName.keys()].join(', ')}), got "${target}"`, target);
      } else if (target === c.name) {
        issue(at(c, 'dependsOn', j, 'containerName'), `must name another container (a container cannot wait for itself), got "${target}"`, target);
      } else {
        const condition = str(dep?.condition);
        if ((condition === 'COMPLETE' || condition === 'SUCCESS') && other.essential) {
          issue(
            at(c, 'dependsOn', j, 'condition'),
            `must be START or HEALTHY for an essential container ("${target}" is essential; ECS allows ${condition} only on a container that may exit), got "${condition}"`,
            condition,
          );
        }
        if (condition === 'HEALTHY' && other.index !== undefined && rec(other.raw.healthCheck) === undefined) {
          issue(at(c, 'dependsOn', j, 'condition'), `needs a healthCheck on "${target}" (HEALTHY waits for it), got "HEALTHY"`, condition);
        }
        if (condition === 'HEALTHY' && other.index === undefined && rec(raw.healthCheck) === undefined) {
          issue(at(c, 'dependsOn', j, 'condition'), `needs a healthCheck on "${target}" (HEALTHY waits for it), got "HEALTHY"`, condition);
        }
      }
    });
    arr(c.raw.volumesFrom).forEach((v, j) => {
      const source = str(rec(v)?.sourceContainer);
      if (source !== undefined && !byName.has(source)) {
        issue(at(c, 'volumesFrom', j, 'sourceContainer'), `must name a container of the task, got "${source}"`, source);
      }
    });
  }
}

/** Port names are unique in the task (Service Connect and VPC Lattice refer to them). */
function checkPortNames({ containers, issue }: RuleContext): TaskPorts {
  const portNames = new Map<string, string>();
  const portsOf = new Map<string, Set<number>>();
  for (const c of containers) {
    const ports = new Set<number>();
    arr(c.raw.portMappings).forEach((p, j) => {
      const pm = rec(p);
      const port = num(pm?.containerPort);
      if (port !== undefined) ports.add(port);
      const name = str(pm?.name);
      if (name === undefined) return;
      if (portNames.has(name)) {
        issue(at(c, 'portMappings', j, 'name'), `must be unique in the task (already used by container "${portNames.get(name)}"), got "${name}"`, name);
      } else portNames.set(name, c.name);
      if (pm?.appProtocol !== undefined && name === undefined) {
        issue(at(c, 'portMappings', j, 'appProtocol'), 'needs a port name (ECS uses appProtocol for named ports)', pm?.appProtocol);
      }
    });
    portsOf.set(c.name, ports);
  }
  return { portNames, portsOf };
}

/** Container cpu and memory fit in the task (RegisterTaskDefinition on Fargate). */
function checkTaskSize({ containers, issue }: RuleContext, taskCpu: number, taskMemory: number): void {
  let cpuSum = 0;
  let memSum = 0;
  for (const c of containers) {
    if (c.index === undefined) continue;
    const cpu = num(c.raw.cpu) ?? 0;
    const memory = num(c.raw.memory);
    const reservation = num(c.raw.memoryReservation);
    cpuSum += cpu;
    memSum += memory ?? reservation ?? 0;
    if (memory !== undefined && memory > taskMemory) {
      issue(at(c, 'memory'), `must be at most the task's memory (${taskMemory} MiB), got ${memory}`, memory);
    }
    if (memory !== undefined && reservation !== undefined && reservation > memory) {
      issue(at(c, 'memoryReservation'), `must be at most the container's memory (${memory} MiB), got ${reservation}`, reservation);
    }
  }
  if (cpuSum > taskCpu) {
    issue(['containers'], `container cpu adds up to ${cpuSum} CPU units, above the task's cpu (${taskCpu}); raise cpu or lower the containers'`, cpuSum);
  }
  if (memSum > taskMemory) {
    issue(['containers'], `container memory (or memoryReservation) adds up to ${memSum} MiB, above the task's memory (${taskMemory}); raise memory or lower the containers'`, memSum);
  }
}

/** FireLens: awsfirelens needs exactly one log router (a container with firelensConfiguration). */
function checkFireLens({ containers, issue }: RuleContext): void {
  const routers = containers.filter((c) => rec(c.raw.firelensConfiguration) !== undefined);
  if (routers.length > 1) {
    issue(at(routers[1], 'firelensConfiguration'), `must be on one container only (ECS allows one log router per task; "${routers[0].name}" already has it)`, routers[1].raw.firelensConfiguration);
  }
  for (const c of containers) {
    const lc = rec(c.raw.logConfiguration);
    if (str(lc?.logDriver) === 'awsfirelens' && routers.length === 0) {
      issue(at(c, 'logConfiguration', 'logDriver'), 'needs a log router: a container with firelensConfiguration (FireLens), got "awsfirelens"', 'awsfirelens');
    }
  }
}

/** Volumes: mount points name a volume; every EFS volume is mounted; EBS needs the service's volumeConfigurations. */
function checkVolumes({ raw, containers, issue }: RuleContext): void {
  const volumes = new Map<string, Record<string, unknown>>();
  arr(raw.volumes).forEach((v, i) => {
    const r = rec(v);
    const name = str(r?.name);
    if (!r || name === undefined) return;
    if (volumes.has(name)) issue(['volumes', i, 'name'], `must be unique among the task's volumes, got "${name}" twice`, name);
    volumes.set(name, r);
  });
  const mounted = new Set<string>();
  for (const c of containers) {
    arr(c.raw.mountPoints).forEach((m, j) => {
      const source = str(rec(m)?.sourceVolume);
      if (source === undefined) return;
      mounted.add(source);
      if (!volumes.has(source)) {
        issue(at(c, 'mountPoints', j, 'sourceVolume'), `must name a volume of the task (volumes: ${[...volumes.keys()].join(', ') || 'none'}), got "${source}"`, source);
      }
    });
  }
  arr(raw.volumes).forEach((v, i) => {
    const r = rec(v);
    const name = str(r?.name);
    if (name !== undefined && rec(r?.efsVolumeConfiguration) && !mounted.has(name)) {
      issue(['volumes', i], `EFS volume "${name}" is mounted by no container: add a mountPoints entry with sourceVolume "${name}", or remove the volume`, name);
    }
  });
  const configured = new Map<string, number>();
  arr(raw.volumeConfigurations).forEach((vc, i) => {
    const name = str(rec(vc)?.name);
    if (name === undefined) return;
    configured.set(name, i);
    if (volumes.get(name)?.configuredAtLaunch !== true) {
      issue(['volumeConfigurations', i, 'name'], `must name a task volume with configuredAtLaunch: true, got "${name}"`, name);
    }
  });
  arr(raw.volumes).forEach((v, i) => {
    const r = rec(v);
    const name = str(r?.name);
    if (name !== undefined && r?.configuredAtLaunch === true && !configured.has(name)) {
      issue(['volumes', i, 'configuredAtLaunch'], `needs a volumeConfigurations entry named "${name}" on the service (ECS attaches the EBS volume at launch)`, true);
    }
  });
}

/** Load balancers send to a container port of the task. */
function checkLoadBalancers({ raw, byName, issue }: RuleContext, { portsOf }: TaskPorts): void {
  if (raw.loadBalancer !== undefined && raw.loadBalancers !== undefined) {
    issue(['loadBalancers'], 'must not be given with loadBalancer: use one or the other (loadBalancer is the shorthand for one target group)', raw.loadBalancers);
  }
  arr(raw.loadBalancers).forEach((lb, i) => {
    const r = rec(lb);
    const name = str(r?.containerName);
    const port = num(r?.containerPort);
    if (name === undefined) return;
    if (!byName.has(name)) {
      issue(['loadBalancers', i, 'containerName'], `must name a container of the task (${[...byName.keys()].join(', ')}), got "${name}"`, name);
    } else if (port !== undefined && !(portsOf.get(name) ?? new Set()).has(port)) {
      issue(['loadBalancers', i, 'containerPort'], `must be a containerPort of container "${name}"'s portMappings, got ${port}`, port);
    }
  });
}

/** Service Connect, VPC Lattice and the App Mesh proxy refer to named ports and containers. */
function checkNamedPortUses({ raw, byName, issue }: RuleContext, { portNames }: TaskPorts): void {
  const sc = rec(raw.serviceConnectConfiguration);
  arr(sc?.services).forEach((s, i) => {
    const portName = str(rec(s)?.portName);
    if (portName !== undefined && !portNames.has(portName)) {
      issue(['serviceConnectConfiguration', 'services', i, 'portName'], `must be the name of a port mapping of the task (${[...portNames.keys()].join(', ') || 'none named'}), got "${portName}"`, portName);
    }
  });
  arr(raw.vpcLatticeConfigurations).forEach((c, i) => {
    const portName = str(rec(c)?.portName);
    if (portName !== undefined && !portNames.has(portName)) {
      issue(['vpcLatticeConfigurations', i, 'portName'], `must be the name of a port mapping of the task (${[...portNames.keys()].join(', ') || 'none named'}), got "${portName}"`, portName);
    }
  });

  const proxy = str(rec(raw.proxyConfiguration)?.containerName);
  if (proxy !== undefined && !byName.has(proxy)) {
    issue(['proxyConfiguration', 'containerName'], `must name a container of the task, got "${proxy}"`, proxy);
  }
}

/** Capacity: the shorthand, a strategy, or the FARGATE launch type; one of them. */
function checkCapacity({ raw, issue }: RuleContext): void {
  const strategy = raw.capacityProviderStrategy;
  if (strategy !== undefined && raw.capacityProvider !== undefined) {
    issue(['capacityProviderStrategy'], 'must not be given with capacityProvider: use one or the other', strategy);
  }
  if (raw.launchType !== undefined && (strategy !== undefined || raw.capacityProvider !== undefined)) {
    issue(['launchType'], 'must not be given with capacityProvider or capacityProviderStrategy (ECS takes a launch type or a strategy)', raw.launchType);
  }
  const providers = new Set<string>();
  let bases = 0;
  let weights = 0;
  arr(strategy).forEach((s, i) => {
    const r = rec(s);
    const cp = str(r?.capacityProvider);
    if (cp !== undefined && providers.has(cp)) issue(['capacityProviderStrategy', i, 'capacityProvider'], `must not repeat a capacity provider, got "${cp}" twice`, cp);
    if (cp !== undefined) providers.add(cp);
    if ((num(r?.base) ?? 0) > 0) bases++;
    weights += num(r?.weight) ?? 0;
    if (bases > 1 && (num(r?.base) ?? 0) > 0) {
      issue(['capacityProviderStrategy', i, 'base'], 'must be 0 here: ECS allows a base on one capacity provider of a strategy only', r?.base);
    }
  });
  if (Array.isArray(strategy) && strategy.length > 0 && weights === 0) {
    issue(['capacityProviderStrategy'], 'must give at least one capacity provider a weight above 0', strategy);
  }

}
