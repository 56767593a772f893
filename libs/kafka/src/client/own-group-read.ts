import { randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';
import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';

/**
 * A one-off read in progress on a consumer of its own: fed each batch, it settles once done.
 * Subclasses seek (`start`) and take the batches (`onBatch`), counting in `found`.
 */
export abstract class OwnGroupRead {
  /** Records handed over so far. */
  found = 0;
  /** Resolves once the read is done; rejects with what ended it otherwise. */
  readonly finished: Promise<void>;
  protected settled = false;
  private resolve!: () => void;
  private reject!: (error: Error) => void;

  constructor() {
    this.finished = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Once the consumer runs: seeks the wanted partitions, pauses the others. */
  abstract start(): void;

  abstract onBatch(payload: EachBatchPayload): Promise<void>;

  /** Ends the read: done without `error`, failed with it. Only the first call counts. */
  settle(error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (error === undefined) this.resolve();
    else
      this.reject(
        error instanceof Error ? error : new Error(`the read failed: ${JSON.stringify(error)}`),
      );
  }
}

/** How long a one-off read may take, and how long a fetch waits for records. */
export interface OwnGroupReadOptions {
  readonly timeoutMs: number;
  readonly maxWaitTimeMs: number;
}

/** A read that did not finish within its time. */
export class RecordReadTimeoutError extends Error {
  readonly code = 'RECORD_READ_TIMEOUT';

  constructor(timeoutMs: number) {
    super(`the records were not read within ${timeoutMs} ms`);
    this.name = 'RecordReadTimeoutError';
  }
}

const logger = new Logger('OwnGroupRead');

/**
 * Runs one read of the topic `name` on a consumer in a consumer group made for it (named
 * `<prefix>sluice-<label>-<random>`) and deleted afterwards: one group join however many
 * partitions the read covers. `begin` makes the read for the consumer. The read ends when it
 * settles, when the consumer crashes, or after `timeoutMs`.
 * @returns the records the read handed over
 */
export async function readInOwnGroup(
  connection: KafkaConnection,
  admin: Admin,
  name: string,
  label: string,
  options: OwnGroupReadOptions,
  begin: (consumer: Consumer) => OwnGroupRead,
): Promise<number> {
  const groupId = connection.topic(`sluice-${label}-${randomBytes(8).toString('hex')}`);
  try {
    return await consume(connection, name, groupId, options, begin);
  } finally {
    // A failure leaves an empty group, which the broker expires.
    await admin.deleteGroups([groupId]).catch((error: unknown) => {
      logger.warn(`could not delete the reader group ${groupId}: ${String(error)}`);
    });
  }
}

async function consume(
  connection: KafkaConnection,
  name: string,
  groupId: string,
  options: OwnGroupReadOptions,
  begin: (consumer: Consumer) => OwnGroupRead,
): Promise<number> {
  const consumer = connection.consumer({
    groupId,
    maxWaitTimeInMs: options.maxWaitTimeMs,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: () => Promise.resolve(false) },
  });
  const read = begin(consumer);
  consumer.on(consumer.events.CRASH, ({ payload }) => read.settle(payload.error));
  const timer = setTimeout(
    () => read.settle(new RecordReadTimeoutError(options.timeoutMs)),
    options.timeoutMs,
  );
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: name, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      // A callback's failure ends the read; kafkajs must not retry the batch.
      eachBatch: (payload) => read.onBatch(payload).catch((error: unknown) => read.settle(error)),
    });
    read.start();
    await read.finished;
    return read.found;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}
