/**
 * Public entry of the spec (the package's `./spec` export): the types of a service spec, and the
 * functions that read, check and write one exactly as the reconciler does, for tools that produce
 * specs (a pipeline step, a generator) and want `ecsr validate`'s answer without the CLI.
 */
export type {
  CapacityProvider,
  CapacityProviderStrategyItem,
  ContainerDefinition,
  CpuArchitecture,
  DeploymentAlarms,
  DeploymentSpec,
  EcsSpecFields,
  HealthCheckSpec,
  KeyValuePair,
  LoadBalancerSpec,
  PortMapping,
  ServiceKey,
  ServiceLoadBalancer,
  ServiceSpec,
  SpecError,
  SpecParseResult,
} from '../lambda/core/types';
export type { ServiceSpecInput } from '../lambda/core/spec';
export type { YamlSpecDoc, YamlSpecError } from '../lambda/core/spec-yaml';
export { formatSpecError, parseSpecItem, parseSpecsYaml, specHash, specToItem, SPEC_DEFAULTS, SPEC_LIMITS } from '../lambda/core/spec';
