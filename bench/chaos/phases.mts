/** Waits both chaos suites share: the first delivery, deliveries flowing again, the drain. */
import { progress } from '../common.mts';
import { type Receiver, type Sender, sleep } from './traffic.mts';

/** Longest wait for deliveries to flow again after a fault. */
export const RECOVERY_TIMEOUT_MS = 90_000;
/** Longest wait, after the sender stops, for every acknowledged call to arrive. */
export const DRAIN_TIMEOUT_MS = 90_000;

/** Sends calls until one arrives: every app is up and the settings reached them. */
export async function firstDelivery(sender: Sender, receiver: Receiver): Promise<void> {
  progress('waiting for the first delivery');
  sender.start();
  await until(() => receiver.times.length > 0, 120_000, 'a first delivery');
  sender.stop();
  await sender.drain(30_000);
}

/** When a call made after `since` first arrived; undefined after the recovery timeout. */
export async function recovered(
  sender: Sender,
  receiver: Receiver,
  since: number,
): Promise<number | undefined> {
  const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    let first: number | undefined;
    for (const [messageId, arrivals] of receiver.arrivals) {
      const call = sender.calls.get(messageId);
      if (call === undefined || call.createdAt < since) continue;
      if (first === undefined || arrivals.at[0] < first) first = arrivals.at[0];
    }
    if (first !== undefined) return first;
    await sleep(100);
  }
  return undefined;
}

/**
 * Waits until every call acknowledged more than `lateMs` ago has arrived (or `timeoutMs`
 * passes): a fault then starts on a pipeline that has caught up with the one before, and what
 * it measures is its own.
 */
export async function settled(
  sender: Sender,
  receiver: Receiver,
  lateMs: number,
  timeoutMs: number,
): Promise<void> {
  const behind = () => {
    const before = Date.now() - lateMs;
    return sender.acked().some((c) => c.ackedAt! < before && !receiver.arrivals.has(c.messageId));
  };
  await until(() => !behind(), timeoutMs, 'the pipeline to catch up').catch(() =>
    progress(`  not caught up after ${timeoutMs / 1_000} s; the next fault starts anyway`),
  );
}

/** Waits until every acknowledged call arrived, or the drain timeout. */
export async function drained(sender: Sender, receiver: Receiver): Promise<void> {
  const acked = sender.acked();
  await until(
    () => acked.every((c) => receiver.arrivals.has(c.messageId)),
    DRAIN_TIMEOUT_MS,
    'every acknowledged call',
  ).catch(() => undefined);
}

export async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
