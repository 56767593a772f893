import type { BreakerView } from '../destinations/breaker-states';

/** The windows health is given over, newest last: name and length. */
export const HEALTH_WINDOWS = [
  { name: 'hour', ms: 3_600_000 },
  { name: 'day', ms: 86_400_000 },
] as const;

export type HealthWindowName = (typeof HEALTH_WINDOWS)[number]['name'];

/** One row of the health query: a window's figures, for the destination or one webhook. */
export interface HealthRecord {
  readonly window: HealthWindowName;
  /** Null on the destination's own row. */
  readonly webhook_id: string | null;
  readonly attempts: string;
  readonly successes: string;
  readonly p50: number | null;
  readonly p99: number | null;
  /** The latest failed attempt of the window, as the query builds it. */
  readonly last_error: LastErrorRecord | null;
}

interface LastErrorRecord {
  readonly at: string;
  readonly webhookId: string | null;
  readonly kind: string;
  readonly reason: string | null;
  readonly status: number | null;
  readonly detail: string | null;
}

/** A window's figures as the API shows them. */
export interface HealthFigures {
  /** Requests made to webhooks (one per webhook per attempt). */
  readonly attempts: number;
  /** Share of them answered 2xx, 0 to 1; null without attempts. */
  readonly successShare: number | null;
  readonly latencyP50Ms: number | null;
  readonly latencyP99Ms: number | null;
  /** The latest failed request, or null. */
  readonly lastError: {
    readonly at: string;
    readonly webhookId: string | null;
    readonly reason: string | null;
    readonly status: number | null;
    readonly detail: string | null;
  } | null;
}

/** A destination's health over the last hour and day, then each webhook's. */
export interface DestinationHealthView {
  readonly destinationId: string;
  readonly name: string;
  readonly enabled: boolean;
  /** The circuit breaker over every dispatcher replica. */
  readonly breaker: BreakerView;
  readonly hour: HealthFigures;
  readonly day: HealthFigures;
  readonly webhooks: readonly WebhookHealthView[];
}

/** A webhook's health; `url` is null for a webhook removed since (its requests still count). */
export interface WebhookHealthView {
  readonly webhookId: string;
  readonly url: string | null;
  readonly hour: HealthFigures;
  readonly day: HealthFigures;
}

const NONE: HealthFigures = {
  attempts: 0,
  successShare: null,
  latencyP50Ms: null,
  latencyP99Ms: null,
  lastError: null,
};

/**
 * The health view from the query's rows: the destination's figures per window, and each
 * webhook's, current webhooks first (in their order), then those removed since. A window or
 * webhook without rows has no attempts.
 */
export function destinationHealthView(
  destination: { readonly id: string; readonly name: string; readonly enabled: boolean },
  webhooks: readonly { readonly id: string; readonly url: string }[],
  records: readonly HealthRecord[],
  breaker: BreakerView,
): DestinationHealthView {
  const figures = (window: HealthWindowName, webhookId: string | null) => {
    const record = records.find((r) => r.window === window && r.webhook_id === webhookId);
    return record === undefined ? NONE : healthFigures(record);
  };
  const urls = new Map(webhooks.map((w) => [w.id, w.url]));
  const removed = records.map((r) => r.webhook_id).filter((id) => id !== null && !urls.has(id));
  const ids = [...webhooks.map((w) => w.id), ...new Set(removed as string[])];
  return {
    destinationId: destination.id,
    name: destination.name,
    enabled: destination.enabled,
    breaker,
    hour: figures('hour', null),
    day: figures('day', null),
    webhooks: ids.map((id) => ({
      webhookId: id,
      url: urls.get(id) ?? null,
      hour: figures('hour', id),
      day: figures('day', id),
    })),
  };
}

function healthFigures(r: HealthRecord): HealthFigures {
  const attempts = Number(r.attempts);
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);
  return {
    attempts,
    successShare: attempts === 0 ? null : Number(r.successes) / attempts,
    latencyP50Ms: round(r.p50),
    latencyP99Ms: round(r.p99),
    lastError:
      r.last_error === null
        ? null
        : {
            at: new Date(r.last_error.at).toISOString(),
            webhookId: r.last_error.webhookId,
            reason: r.last_error.reason,
            status: r.last_error.status,
            detail: r.last_error.detail,
          },
  };
}
