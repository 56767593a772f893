/**
 * The traced sides of `bench:ingest` and `bench:dispatcher`: the app as built, with traces
 * exported over OTLP/HTTP to a local sink (bench/otlp-sink.mts) at 10% and at 100% of new
 * traces, and on with none sampled (0%), against the same app with traces off (the default).
 */
import { firstJsonLine, type Managed, type Supervisor } from './processes.mts';

const OTLP_SINK = 'bench/otlp-sink.mts';
const SINK_START_TIMEOUT_MS = 10_000;

/** Shares of new traces kept by the traced sides. */
export const TRACED_RATIOS = { traced10: 0.1, traced100: 1, traced0: 0 } as const;
export type TracedSide = keyof typeof TRACED_RATIOS;

/** Starts the OTLP sink; returns its base URL (OTEL_EXPORTER_OTLP_ENDPOINT) and process. */
export async function startOtlpSink(
  supervisor: Supervisor,
): Promise<{ url: string; sink: Managed }> {
  const sink = supervisor.spawn('OTLP sink', process.execPath, [OTLP_SINK], {});
  const { port } = (await firstJsonLine(sink, SINK_START_TIMEOUT_MS)) as { port: number };
  return { url: `http://127.0.0.1:${port}`, sink };
}

/** The variables that turn traces on at `ratio`, exporting to the sink at `url`. */
export function tracingEnv(url: string, ratio: number): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
  };
}
