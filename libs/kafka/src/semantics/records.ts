/** A record to produce. The topic is the logical name; the deployment prefix is added on send. */
export interface OutgoingRecord {
  readonly topic: string;
  readonly key?: string | Buffer | null;
  readonly value: string | Buffer;
  readonly headers?: Readonly<Record<string, string | Buffer>>;
  /** An explicit partition; by default the key's hash chooses one. */
  readonly partition?: number;
}

/** A consumed record, as handlers see it. `topic` is the logical name (prefix removed). */
export interface IncomingRecord {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offsets are 64-bit; kept as decimal strings. */
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | undefined>>;
  /** Broker or producer timestamp, epoch milliseconds. */
  readonly timestamp: number;
  /**
   * A header's value as UTF-8 text, read without the header map, when the record can (a
   * fetched one reads it from the fetched bytes); {@link headerText} uses it.
   */
  readonly text?: (name: string) => string | undefined;
}

/** A header's value as UTF-8 text, or undefined when absent. */
export function headerText(record: IncomingRecord, name: string): string | undefined {
  return record.text !== undefined ? record.text(name) : record.headers[name]?.toString('utf8');
}

/** A consumed record's headers, to produce again (as they are, to be added to or changed). */
export function copyHeaders(record: IncomingRecord): Record<string, Buffer | string> {
  const headers: Record<string, Buffer | string> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** A header map with one value per name, as Buffers. */
export function normalizeHeaders(
  raw: Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>> | undefined,
): Record<string, Buffer | undefined> {
  const headers: Record<string, Buffer | undefined> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    // A repeated header keeps its last value: Sluice never repeats one.
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    // kafkajs hands header values over as Buffers already: no copy on the hot path.
    headers[name] = typeof last === 'string' ? Buffer.from(last) : last;
  }
  return headers;
}
