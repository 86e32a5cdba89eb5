/**
 * The fan-out in the local run and the bench: what SQS and Lambda's event source
 * mapping do in AWS, in process. {@link InMemoryFanOutQueue} takes the dispatcher's messages as the
 * SQS queue does; {@link deliver} hands them to the function's code (`TargetRunner.run`) at most
 * `maximumConcurrency` at a time, as the mapping's `ScalingConfig.MaximumConcurrency` does, and
 * never lets one message's failure stop the others.
 */
import type { FanOutQueue, FanOutSendOptions } from '../lambda/core/fan-out';
import type { FanOutMessage } from '../lambda/core/targets';

/**
 * The queue: messages kept in memory, in the order sent. A message sent with `delaySeconds` is
 * not taken before that many seconds of `nowMs` have passed (SQS's `DelaySeconds`).
 */
export class InMemoryFanOutQueue implements FanOutQueue {
  private messages: { message: FanOutMessage; visibleAt: number }[] = [];

  /** @param nowMs the queue's clock, in milliseconds (the simulators' virtual clock in the local run). */
  constructor(private readonly nowMs: () => number = () => Date.now()) {}

  /** @throws RangeError for a delay outside 0-900 whole seconds (SQS refuses it too). */
  async send(messages: readonly FanOutMessage[], options: FanOutSendOptions = {}): Promise<{ failed: { target: string; error: string }[] }> {
    const delay = options.delaySeconds ?? 0;
    if (!(Number.isInteger(delay) && delay >= 0 && delay <= 900)) throw new RangeError(`delaySeconds must be a whole number of seconds from 0 to 900, got ${delay}`);
    const visibleAt = this.nowMs() + delay * 1000;
    // Through JSON, as SQS carries a body: the runner reads what the function would read.
    this.messages.push(...messages.map((m) => ({ message: JSON.parse(JSON.stringify(m)) as FanOutMessage, visibleAt })));
    return { failed: [] };
  }

  /** Takes every message whose delay has passed (the mapping's poll), in the order sent. */
  take(): FanOutMessage[] {
    const now = this.nowMs();
    const ready = this.messages.filter((m) => m.visibleAt <= now);
    this.messages = this.messages.filter((m) => m.visibleAt > now);
    return ready.map((m) => m.message);
  }

  /** Messages held, delayed ones included. */
  get size(): number {
    return this.messages.length;
  }

  /** Messages still delayed. */
  get delayed(): number {
    const now = this.nowMs();
    return this.messages.filter((m) => m.visibleAt > now).length;
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
