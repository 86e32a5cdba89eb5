/**
 * The fan-out in the local run and the bench (issue 13 part 2): what SQS and Lambda's event source
 * mapping do in AWS, in process. {@link InMemoryFanOutQueue} takes the dispatcher's messages as the
 * SQS queue does; {@link deliver} hands them to the function's code (`TargetRunner.run`) at most
 * `maximumConcurrency` at a time, as the mapping's `ScalingConfig.MaximumConcurrency` does, and
 * never lets one message's failure stop the others.
 */
import type { FanOutQueue } from '../lambda/core/fan-out';
import type { FanOutMessage } from '../lambda/core/targets';

/** The queue: messages kept in memory, in the order sent. */
export class InMemoryFanOutQueue implements FanOutQueue {
  private messages: FanOutMessage[] = [];

  async send(messages: readonly FanOutMessage[]): Promise<{ failed: { target: string; error: string }[] }> {
    // Through JSON, as SQS carries a body: the runner reads what the function would read.
    this.messages.push(...messages.map((m) => JSON.parse(JSON.stringify(m)) as FanOutMessage));
    return { failed: [] };
  }

  /** Takes every message waiting (the mapping's poll). */
  take(): FanOutMessage[] {
    return this.messages.splice(0);
  }

  get size(): number {
    return this.messages.length;
  }
}

/** One message's end: its result, or the error its invocation threw (SQS would deliver it again). */
export type Delivery<R> = { readonly message: FanOutMessage; readonly result: R } | { readonly message: FanOutMessage; readonly error: unknown };

/**
 * Runs `run` once per message, at most `maximumConcurrency` at once, each started as soon as a
 * slot is free; a thrown error ends that message only.
 * @returns one delivery per message, in the order they ended.
 */
export async function deliver<R>(
  messages: readonly FanOutMessage[],
  maximumConcurrency: number,
  run: (message: FanOutMessage) => Promise<R>,
  onEnd?: (delivery: Delivery<R>) => void,
): Promise<Delivery<R>[]> {
  if (!(maximumConcurrency >= 1)) throw new RangeError(`maximumConcurrency must be at least 1, got ${maximumConcurrency}`);
  const ended: Delivery<R>[] = [];
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const message = messages[next++];
      let delivery: Delivery<R>;
      try {
        delivery = { message, result: await run(message) };
      } catch (error) {
        delivery = { message, error };
      }
      ended.push(delivery);
      onEnd?.(delivery);
    }
  };
  await Promise.all(Array.from({ length: Math.min(maximumConcurrency, messages.length) }, worker));
  return ended;
}
