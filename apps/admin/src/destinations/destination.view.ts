import { DestinationEntity, WebhookEntity } from '@app/settings';

import { maskedHeaders } from './header-values';
import { withoutCredentials } from './webhook-rules';

/** A webhook entry as the API shows it. */
export interface WebhookView {
  readonly id: string;
  readonly position: number;
  readonly url: string;
  /** The static headers' names; every value masked (`header-values.ts`). */
  readonly headers: Record<string, string>;
}

/** A destination as the API shows it: whether a shared secret is set, never the secret. */
export interface DestinationView {
  readonly id: string;
  readonly sourceId: string;
  readonly kind: string;
  readonly name: string;
  readonly enabled: boolean;
  /** Which calls it takes (docs/api.md, "Destination filters"); null takes every call. */
  readonly filter: object | null;
  /** Deliveries a second at most, across all dispatcher replicas; null is unlimited. */
  readonly rateLimitPerSecond: number | null;
  /** Batched delivery's bounds; null sends one call a request. */
  readonly batching: {
    readonly maxCalls: number;
    readonly maxBytes: number;
    readonly maxWaitMs: number;
  } | null;
  /** Ordered delivery's bounds; null delivers without ordering. */
  readonly ordering: { readonly maxPendingCalls: number; readonly maxHoldSeconds: number } | null;
  /** Its webhook POSTs carry a `traceparent` while the dispatcher exports traces. */
  readonly sendTraceparent: boolean;
  readonly sharedSecretSet: boolean;
  /** How its requests are signed (docs/api.md, "Signatures"). */
  readonly signatureMode: string;
  /**
   * When the previous secret of the last rotation stops (or stopped) signing, ISO 8601; null
   * when there is none. Never the secret itself.
   */
  readonly previousSecretExpiresAt: string | null;
  readonly webhooks: WebhookView[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function destinationView(
  d: DestinationEntity,
  webhooks: readonly WebhookEntity[],
): DestinationView {
  return {
    id: d.id,
    sourceId: d.sourceId,
    kind: d.kind,
    name: d.name,
    enabled: d.enabled,
    filter: d.filter ?? null,
    rateLimitPerSecond: d.rateLimitPerSecond ?? null,
    batching:
      d.batchMaxCalls === null || d.batchMaxCalls === undefined
        ? null
        : { maxCalls: d.batchMaxCalls, maxBytes: d.batchMaxBytes!, maxWaitMs: d.batchMaxWaitMs! },
    ordering:
      d.orderingMaxPendingCalls === null || d.orderingMaxPendingCalls === undefined
        ? null
        : { maxPendingCalls: d.orderingMaxPendingCalls, maxHoldSeconds: d.orderingMaxHoldSeconds! },
    sendTraceparent: d.sendTraceparent ?? false,
    sharedSecretSet: d.sharedSecretCiphertext !== null,
    signatureMode: d.signatureMode,
    previousSecretExpiresAt: d.previousSecretExpiresAt?.toISOString() ?? null,
    webhooks: [...webhooks].sort((a, b) => a.position - b.position).map(webhookView),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

export function webhookView(w: WebhookEntity): WebhookView {
  return {
    id: w.id,
    position: w.position,
    url: withoutCredentials(w.url),
    headers: maskedHeaders(w.headers),
  };
}
