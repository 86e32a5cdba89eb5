/**
 * ECS errors as the simulator answers them: the `__type` ECS puts in the AWS JSON 1.1 error body,
 * the message, and the HTTP status (400 for client errors, throttling included; 500 for
 * ServerException), per the Amazon ECS API reference "Common Errors" and each action's "Errors".
 * The AWS SDK maps `__type` to its typed exception (e.g. `ClusterNotFoundException`), and treats
 * `ThrottlingException` as a throttling error that its standard retry strategy retries.
 */

/** Error types the simulator answers. Others can be injected by name (fault injection). */
export type EcsErrorType =
  | 'ClientException'
  | 'InvalidParameterException'
  | 'ClusterNotFoundException'
  | 'ServiceNotFoundException'
  | 'ServiceNotActiveException'
  | 'ClusterContainsServicesException'
  | 'ClusterContainsTasksException'
  | 'ResourceNotFoundException'
  | 'ThrottlingException'
  | 'ServerException'
  | 'UnknownOperationException'
  | 'SerializationException'
  | (string & {});

export class EcsApiError extends Error {
  constructor(
    readonly type: EcsErrorType,
    message: string,
    /** HTTP status the server answers with. */
    readonly status: number = type === 'ServerException' ? 500 : 400,
  ) {
    super(message);
    this.name = type;
  }
}

export const clientException = (m: string) => new EcsApiError('ClientException', m);
export const invalidParameter = (m: string) => new EcsApiError('InvalidParameterException', m);
export const clusterNotFound = () => new EcsApiError('ClusterNotFoundException', 'Cluster not found.');
export const serviceNotFound = () => new EcsApiError('ServiceNotFoundException', 'Service not found.');
export const serviceNotActive = () => new EcsApiError('ServiceNotActiveException', 'Service was not ACTIVE.');
export const throttled = () => new EcsApiError('ThrottlingException', 'Rate exceeded');
