/**
 * Local Fargate: an ECS API simulator with a virtual clock. `startSimulator()` serves ECS's AWS
 * JSON 1.1 protocol on loopback (plus the `/_sim/` control endpoint); `SimulatedEcs` is the same
 * core in process, without HTTP. See docs/simulator.md.
 */
export { startSimulator, Simulator, SimulatorListenError, type StartSimulatorOptions } from './server';
export { SimulatedEcs, type SimulatedEcsOptions, type SimVpc, type SimSnapshot, type ControlRecord } from './ecs';
export { VirtualClock, type VirtualClockOptions } from './clock';
export { EcsApiError, type EcsErrorType } from './errors';
export {
  DEFAULT_FAILURE_RULES,
  FAILURE_MODES,
  ruleMatches,
  type FailureMode,
  type FailureRule,
} from './failure-modes';
export { DEFAULT_TIMINGS, circuitBreakerThreshold, type SimTimings } from './scheduler';
export type { CallCount, CallFilter, CallRecord, FaultSpec } from './calls';
export { handleControl, CONTROL_COMMANDS } from './control';
export { ECS_TARGET_PREFIX } from './protocol';
export { fargateMemoryValues, isValidFargatePair } from './task-definitions';
export { SimEventBus, assumedRoleIdentity, iamUserIdentity, type BusEvent, type Caller, type CallerIdentity } from './events';
