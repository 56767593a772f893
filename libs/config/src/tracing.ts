/** `OTEL_TRACES_EXPORTER` values: '' decides by whether an OTLP endpoint is set. */
export const TRACES_EXPORTERS = ['', 'none', 'otlp'] as const;
export type TracesExporterName = (typeof TRACES_EXPORTERS)[number];

/** OTLP over HTTP, the encodings every OTLP receiver takes on port 4318. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
/** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` values: '' follows `OTEL_EXPORTER_OTLP_PROTOCOL`. */
export const TRACES_PROTOCOLS = ['', 'http/protobuf', 'http/json'] as const;

/** The standard `OTEL_TRACES_SAMPLER` values. */
export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSamplerName = (typeof TRACES_SAMPLERS)[number];

/** An http or https URL, or nothing. */
export const OTLP_URL = /^(https?:\/\/\S+)?$/;

/** OTLP/HTTP's own default receiver, as the specification has it. */
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** The variables {@link tracingConfig} reads; BaseEnv declares them. */
export interface TracingVariables {
  OTEL_TRACES_EXPORTER: TracesExporterName;
  OTEL_SDK_DISABLED: boolean;
  OTEL_EXPORTER_OTLP_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol;
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: OtlpProtocol | '';
  OTEL_SERVICE_NAME: string;
  OTEL_RESOURCE_ATTRIBUTES: string;
  OTEL_TRACES_SAMPLER: TracesSamplerName;
  OTEL_TRACES_SAMPLER_ARG: string;
  OTEL_BSP_SCHEDULE_DELAY: number;
  OTEL_BSP_MAX_QUEUE_SIZE: number;
}

/** Traces, typed (libs/tracing's TracingOptions has the same shape). */
export interface TracingConfig {
  /** Where spans are posted (the `/v1/traces` URL). */
  readonly url: string;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES` as given: `key=value` pairs. */
  readonly resourceAttributes: string;
  readonly sampler: TracesSamplerName;
  /** The share the ratio samplers keep, 0 to 1. */
  readonly ratio: number;
  readonly scheduleDelayMs: number;
  readonly maxQueueSize: number;
}

/** Traces' settings, or undefined when traces are off (the default). */
export function tracingConfig(env: TracingVariables, app: string): TracingConfig | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const exporter = env.OTEL_TRACES_EXPORTER;
  const on = exporter === 'otlp' || (exporter === '' && (endpoint !== '' || tracesEndpoint !== ''));
  if (!on || env.OTEL_SDK_DISABLED) return undefined;
  return {
    url: tracesEndpoint || `${(endpoint || DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
    protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: env.OTEL_SERVICE_NAME || `sluice-${app}`,
    resourceAttributes: env.OTEL_RESOURCE_ATTRIBUTES,
    sampler: env.OTEL_TRACES_SAMPLER,
    ratio: env.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG),
    scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY,
    maxQueueSize: env.OTEL_BSP_MAX_QUEUE_SIZE,
  };
}
