import { setFlagsFromString } from 'node:v8';

/**
 * V8 options every app process runs with, set before the app's own code runs.
 *
 * `--no-allocation-site-pretenuring`: V8 allocates objects straight into the old generation
 * once enough objects from the same allocation site survived young-generation collections.
 * Sluice's per-call and per-record objects live for a Kafka round trip or a webhook request,
 * so a burst of slow acknowledgements (a batch load, a fresh topic, a broker pause) would tip
 * their sites over, and the decision stays: ingest then filled its old generation under
 * `/v1/track` load and paid for frequent full collections. Without pretenuring those objects
 * die young (bench/README.md, "Where ingest's time goes").
 */
export function setV8Options(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
