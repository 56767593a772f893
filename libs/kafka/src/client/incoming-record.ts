import type { KafkaMessage } from 'kafkajs';

import { FetchedMessage } from '../internals/fetched-message';
import { HeaderNames, IncomingRecord, normalizeHeaders } from '../semantics/records';

/** A message kafkajs fetched, as the record handlers and readers see it. */
export function incomingRecord(
  topic: string,
  partition: number,
  message: KafkaMessage,
): IncomingRecord {
  if (message instanceof FetchedMessage) return new FetchedRecord(topic, partition, message);
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: normalizeHeaders(message.headers),
    timestamp: Number(message.timestamp),
  };
}

/**
 * A record decoded by Sluice's Fetch decoder: its headers are read by name from the fetched
 * bytes (`text`), and made into a map only when a consumer asks for `headers`.
 */
class FetchedRecord implements IncomingRecord {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: number;
  readonly #message: FetchedMessage;
  #headers: Record<string, Buffer | undefined> | undefined;

  constructor(
    readonly topic: string,
    readonly partition: number,
    message: FetchedMessage,
  ) {
    this.offset = message.offset;
    this.key = message.key;
    this.value = message.value;
    this.timestamp = Number(message.timestamp);
    this.#message = message;
  }

  get headers(): Readonly<Record<string, Buffer | undefined>> {
    // A null value stays null, as kafkajs's own decoder hands it over.
    this.#headers ??= normalizeHeaders(this.#message.headers as KafkaMessage['headers']);
    return this.#headers;
  }

  text(name: string): string | undefined {
    return this.#message.headerText(name);
  }

  texts(names: HeaderNames): (string | undefined)[] {
    return this.#message.headerTexts(names);
  }
}
