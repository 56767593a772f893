/** A topic to create at start-up when missing. */
export interface TopicSpec {
  /** Logical name; the deployment prefix is added. */
  readonly name: string;
  readonly partitions: number;
  /** -1 for the broker's default. */
  readonly replicationFactor: number;
  readonly retentionMs: number;
}

/** Defaults shared by the topics an app creates. */
export interface TopicDefaults {
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly retentionMs: number;
}

/** Topic specs for logical names that share the same defaults. */
export function topicSpecs(names: readonly string[], defaults: TopicDefaults): TopicSpec[] {
  return names.map((name) => ({ name, ...defaults }));
}
