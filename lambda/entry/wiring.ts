/**
 * What the Lambda builds once per container (cold start): the configuration (`loadConfig`, a bad
 * variable throws a ConfigError naming it), the logger, metrics and tracer, the pass runtime and,
 * in fan-out mode (`FANOUT_QUEUE_URL`), the ports that send and run one message per target.
 *
 * Endpoints, region and credentials come from the SDK's standard configuration (`AWS_REGION`,
 * `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_ECS`, `AWS_ENDPOINT_URL_DYNAMODB`), so the same bundle
 * runs against AWS, the simulator, dynalite and moto.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { loadConfig, type ReconcilerConfig } from '../config';
import { LOG_SERVICE_NAME, PowertoolsLog } from '../adapters/logger';
import { PowertoolsMetricsSink } from '../adapters/metrics';
import { createRuntime, type Runtime } from '../adapters/runtime';
import { DynamoTargetDirectory, SqsFanOutQueue, TargetRunner } from '../adapters/fan-out';
import { createSqsClient } from '../adapters/sqs-event-feed';

/** Fan-out mode's ports: the declared targets, the queue of one message per target, the runner. */
export interface FanOutWiring {
  readonly settings: NonNullable<ReconcilerConfig['fanOut']>;
  readonly directory: DynamoTargetDirectory;
  readonly queue: SqsFanOutQueue;
  readonly runner: TargetRunner;
}

/** The container's long-lived objects, shared by every entry point. */
export interface Wiring {
  readonly config: ReconcilerConfig;
  readonly logger: Logger;
  readonly log: PowertoolsLog;
  readonly metrics: PowertoolsMetricsSink;
  readonly tracer: Tracer;
  readonly runtime: Runtime;
  /** Which services named by ECS's events have a spec item (the events fast path's first read). */
  readonly specKeys: DynamoTargetDirectory;
  /** Fan-out mode only. */
  readonly fanOut?: FanOutWiring;
}

/**
 * Builds the container's {@link Wiring} from the environment.
 * @throws ConfigError when a variable is missing or malformed (lambda/config.ts).
 */
export function createWiring(): Wiring {
  const config = loadConfig();
  const logger = new Logger({ serviceName: LOG_SERVICE_NAME });
  const metrics = new PowertoolsMetricsSink(config.metricsNamespace, new Metrics({ namespace: config.metricsNamespace }));
  /**
   * X-Ray tracing (Powertools Tracer): on in Lambda unless `POWERTOOLS_TRACE_ENABLED=false` (the
   * construct's `tracing` prop); Powertools turns it off by itself outside Lambda, so `ecsr`, the
   * local run and the tests never need an X-Ray daemon. HTTP is not patched globally: the ECS and
   * DynamoDB clients are captured instead (one subsegment per AWS call).
   */
  const tracer = new Tracer({ serviceName: LOG_SERVICE_NAME, captureHTTPsRequests: false });
  const log = new PowertoolsLog(logger);
  const runtime = createRuntime(config, { log, metrics, monotonicMs: () => performance.now() });
  tracer.captureAWSv3Client(runtime.ecs);
  tracer.captureAWSv3Client(runtime.doc);
  const specKeys = new DynamoTargetDirectory(runtime.doc, config.specsTable);
  const wiring = { config, logger, log, metrics, tracer, runtime, specKeys };
  return config.fanOut ? { ...wiring, fanOut: fanOutWiring(wiring, config.fanOut) } : wiring;
}

function fanOutWiring(w: Omit<Wiring, 'fanOut'>, settings: FanOutWiring['settings']): FanOutWiring {
  const queue = new SqsFanOutQueue(createSqsClient(), settings.queueUrl);
  return {
    settings,
    directory: new DynamoTargetDirectory(w.runtime.doc, w.config.specsTable),
    queue,
    // A fast-path message whose target's lease is held goes back to the queue with a delay
    // instead of waiting in its invocation (one of the mapping's concurrency slots).
    runner: new TargetRunner(w.config, { doc: w.runtime.doc, metrics: w.metrics, log: w.log, monotonicMs: () => performance.now(), requeue: queue }),
  };
}
