/**
 * ECS ARNs in the new (long) format, Amazon ECS Developer Guide "Amazon Resource Names (ARNs) and
 * IDs": `arn:aws:ecs:REGION:ACCOUNT:cluster/NAME`, `service/CLUSTER/NAME`, `task/CLUSTER/ID`,
 * `task-definition/FAMILY:REVISION`, `container/CLUSTER/TASK_ID/UUID`.
 */

export interface ArnScope {
  readonly region: string;
  readonly accountId: string;
}

export type ParsedArn =
  | { kind: 'cluster'; cluster: string }
  | { kind: 'service'; cluster: string; service: string }
  | { kind: 'task'; cluster: string; taskId: string }
  | { kind: 'task-definition'; family: string; revision: number }
  | { kind: 'service-revision' | 'service-deployment'; cluster: string; service: string; id: string };

/**
 * Region and account are taken as they come (no colon): the simulator's own ARNs must parse back
 * whatever `region` / `accountId` it was started with (e.g. `--account-id 42`).
 */
const ARN_RE = /^arn:aws[a-z-]*:ecs:([^:]+):([^:]+):(.+)$/;

export class Arns {
  constructor(readonly scope: ArnScope) {}

  private prefix(): string {
    return `arn:aws:ecs:${this.scope.region}:${this.scope.accountId}`;
  }

  cluster(name: string): string {
    return `${this.prefix()}:cluster/${name}`;
  }

  service(cluster: string, name: string): string {
    return `${this.prefix()}:service/${cluster}/${name}`;
  }

  task(cluster: string, id: string): string {
    return `${this.prefix()}:task/${cluster}/${id}`;
  }

  /** `service-revision/CLUSTER/SERVICE/ID` (Amazon ECS Developer Guide, "Amazon ECS service revisions"). */
  serviceRevision(cluster: string, service: string, id: string): string {
    return `${this.prefix()}:service-revision/${cluster}/${service}/${id}`;
  }

  /** `service-deployment/CLUSTER/SERVICE/ID`. */
  serviceDeployment(cluster: string, service: string, id: string): string {
    return `${this.prefix()}:service-deployment/${cluster}/${service}/${id}`;
  }

  container(cluster: string, taskId: string, uuid: string): string {
    return `${this.prefix()}:container/${cluster}/${taskId}/${uuid}`;
  }

  taskDefinition(family: string, revision: number): string {
    return `${this.prefix()}:task-definition/${family}:${revision}`;
  }

  /** Principal shown as `registeredBy` / `createdBy`. */
  principal(): string {
    return `arn:aws:iam::${this.scope.accountId}:root`;
  }

  /** Parses any ECS ARN the simulator issues; undefined for anything else. */
  parse(arn: string): ParsedArn | undefined {
    const m = ARN_RE.exec(arn);
    if (!m) return undefined;
    const resource = m[3];
    const slash = resource.indexOf('/');
    if (slash < 0) return undefined;
    const type = resource.slice(0, slash);
    const rest = resource.slice(slash + 1).split('/');
    switch (type) {
      case 'cluster':
        return rest.length === 1 && rest[0] ? { kind: 'cluster', cluster: rest[0] } : undefined;
      case 'service':
        return rest.length === 2 ? { kind: 'service', cluster: rest[0], service: rest[1] } : undefined;
      case 'task':
        return rest.length === 2 ? { kind: 'task', cluster: rest[0], taskId: rest[1] } : undefined;
      case 'service-revision':
      case 'service-deployment':
        return rest.length === 3 && rest.every((x) => x !== '') ? { kind: type, cluster: rest[0], service: rest[1], id: rest[2] } : undefined;
      case 'task-definition': {
        const td = /^([A-Za-z0-9_-]+):(\d+)$/.exec(rest.join('/'));
        return td ? { kind: 'task-definition', family: td[1], revision: Number(td[2]) } : undefined;
      }
      default:
        return undefined;
    }
  }
}

/** The last path element of an ARN, or the input when it is not an ARN (name or id). */
export function shortName(nameOrArn: string): string {
  if (!nameOrArn.startsWith('arn:')) return nameOrArn;
  const resource = nameOrArn.split(':').slice(5).join(':');
  const parts = resource.split('/');
  return parts[parts.length - 1];
}
