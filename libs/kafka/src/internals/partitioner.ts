import { randomBytes } from 'node:crypto';

import type { ICustomPartitioner } from 'kafkajs';

/**
 * The Java client's partitioner (murmur2 of the key, modulo the partition count), so a key
 * lands where other Kafka clients put it. kafkajs ships the same rule, computed with 64-bit
 * `Long` objects per key; this one uses 32-bit integer arithmetic, as Java does.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 hash of a key's bytes (UTF-8 for a string), as a signed 32-bit integer. */
export function murmur2(key: Buffer | string): number {
  const data = typeof key === 'string' ? Buffer.from(key) : key;
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last one to three bytes.
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2] << 16;
  if (rest >= 2) h ^= data[whole + 1] << 8;
  if (rest >= 1) {
    h ^= data[whole];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

const toPositive = (n: number): number => n & 0x7fffffff;

/**
 * The partition the partitioner last chose for each message object it was given: a send's
 * answer is checked against it (kafkajs can resolve a send without every partition's answer).
 */
export const chosenPartitions = new WeakMap<object, number>();

/**
 * An explicit partition wins; a key picks `murmur2(key) mod partitions`; a record without
 * either goes round-robin over the partitions that have a leader. This is kafkajs's
 * `Partitioners.DefaultPartitioner`, with the faster hash. Each choice is kept in
 * {@link chosenPartitions}.
 */
export const keyHashPartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  const choose: ReturnType<ICustomPartitioner> = ({ topic, partitionMetadata, message }) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) {
      return toPositive(murmur2(message.key)) % partitionMetadata.length;
    }
    const counter = (counters.get(topic) ?? randomBytes(4).readUInt32BE(0)) + 1;
    counters.set(topic, counter);
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    if (available.length === 0) return toPositive(counter) % partitionMetadata.length;
    return available[toPositive(counter) % available.length].partitionId;
  };
  return (args) => {
    const partition = choose(args);
    chosenPartitions.set(args.message, partition);
    return partition;
  };
};
