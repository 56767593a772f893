import { Logger } from '@nestjs/common';

import { DestinationSettings, SettingsCache, WebhookSettings } from '@app/settings';
import { SecretBox, SecretBoxError } from '@app/signing';
import { Span, Tracer } from '@app/tracing';

import { addTraceparent, endWebhookSpan, startWebhookSpan } from './delivery-tracing';
import { DeliveryFacts, describeDelivery, TimedResult } from './delivery-record';
import { DispatcherMetrics } from './dispatcher.metrics';
import { WebhookClient } from './webhook-client';
import {
  maskedHeaders,
  MessageFacts,
  previousSecretSigns,
  SecretSigners,
  secretSigners,
  Signing,
  sluiceHeaders,
  StaticHeaders,
  UnsignableError,
  webhookHeaders,
} from './webhook-request';

/** How a POST is told: in the log, and on the attempt's span. */
export interface PostContext {
  /** Names the batch request in the log. */
  readonly batch?: string;
  /** The attempt's only webhook: its span tells the POST. */
  readonly alone?: boolean;
  /** The attempt's span, or its batch's (traces on). */
  readonly span?: Span;
}

/**
 * Signs a request's body in its destination's mode and POSTs it to a webhook: the part of a
 * delivery that single and batched delivery share.
 */
export class WebhookPoster {
  /** Signers of opened shared secrets by their ciphertext; a settings reload makes new arrays. */
  private readonly signers = new WeakMap<object, SecretSigners>();
  /**
   * Static headers, opened, less those that cannot be sent (saved before the admin refused
   * them); opened once per settings snapshot.
   */
  private readonly staticHeaders: StaticHeaders;

  constructor(
    private readonly settings: Pick<SettingsCache, 'destination'>,
    private readonly client: Pick<WebhookClient, 'post'>,
    private readonly metrics: DispatcherMetrics,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    /** Undefined when traces are off: then no span or attribute is built. */
    readonly tracer: Tracer | undefined,
  ) {
    this.staticHeaders = new StaticHeaders(
      (message) => logger.warn(message),
      (sealed) => secrets.openText(sealed),
    );
  }

  /**
   * Each webhook's headers for `body`, signed as `message` at its time, with `extra` headers.
   * @throws {SecretBoxError} or {@link UnsignableError} when it cannot be signed
   *   ({@link unsendableReason})
   */
  headers(
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
    body: Buffer,
    message: MessageFacts,
    extra?: Readonly<Record<string, string>>,
  ): Record<string, string>[] {
    const signed = sluiceHeaders(body, this.signing(destination, message.nowMs), message);
    const sent = extra === undefined ? signed : { ...signed, ...extra };
    return webhooks.map((webhook) => webhookHeaders(this.staticHeaders.of(webhook), sent));
  }

  /**
   * POSTs to one webhook. `how.span` is the attempt's span (or its batch's) when traces are on;
   * when it is the attempt's only webhook (`how.alone`), that span tells the POST (no span of
   * its own). `how.batch` names a batch request in the log.
   */
  async post(
    facts: DeliveryFacts,
    webhook: WebhookSettings,
    body: Buffer,
    headers: Record<string, string>,
    how: PostContext = {},
  ): Promise<TimedResult> {
    this.metrics.requestStarted();
    const { batch, alone = false, span: parent } = how;
    const tracer = this.tracer;
    const span = tracer && startWebhookSpan(tracer, parent, webhook.url, webhook.id, alone);
    // The receiver continues the trace when its destination asks for the header.
    if (tracer && this.settings.destination(facts.destinationId)?.sendTraceparent) {
      addTraceparent(headers, span, parent);
    }
    const startedAt = performance.now();
    const result = await this.client.post(webhook.url, body, headers);
    const latencyMs = performance.now() - startedAt;
    if (span) endWebhookSpan(span, result, latencyMs);
    this.metrics.requestEnded(result.kind, result.status, latencyMs / 1000);
    if (result.kind !== 'success') {
      this.logger.warn(
        `${batch ?? describeDelivery(facts)} to webhook ${webhook.id}, attempt ${facts.attempt}: ` +
          `${result.kind} ${result.reason} (${result.detail})`,
      );
    }
    // A failure keeps what was sent (values masked) for the ledger; a success needs none.
    return result.kind === 'success'
      ? { webhookId: webhook.id, result, latencyMs }
      : { webhookId: webhook.id, result, latencyMs, requestHeaders: maskedHeaders(headers) };
  }

  /**
   * How a delivery to `destination` is signed at `nowMs`: its mode, its secret and, while a
   * rotation's overlap lasts, the previous secret.
   */
  private signing(destination: DestinationSettings, nowMs: number): Signing {
    const mode = destination.signatureMode ?? 'x-signature';
    const current = this.signer(destination.sharedSecretCiphertext);
    if (current === undefined) return { mode };
    const previous = previousSecretSigns(destination.previousSecretExpiresAt, nowMs)
      ? this.signer(destination.previousSecretCiphertext)
      : undefined;
    return { mode, current, previous };
  }

  /** The signers of a shared secret, opened once per settings snapshot. */
  private signer(ciphertext: Readonly<Uint8Array> | null | undefined): SecretSigners | undefined {
    if (!ciphertext) return undefined;
    let signer = this.signers.get(ciphertext);
    if (signer === undefined) {
      signer = secretSigners(this.secrets.open(ciphertext));
      this.signers.set(ciphertext, signer);
    }
    return signer;
  }
}

/**
 * Why a delivery cannot be signed or sent, or undefined for an unexpected error: a secret or
 * static header value sealed under another key (the dispatcher's SECRETS_ENCRYPTION_KEY
 * differs from the admin app's), or a standard-webhooks secret that is not whsec_ (the admin
 * API refuses that). Such a delivery is dead-lettered, so one destination never blocks a
 * partition; it is replayable once fixed.
 */
export function unsendableReason(
  error: unknown,
): 'secret_unreadable' | 'secret_not_whsec' | undefined {
  if (error instanceof SecretBoxError) return 'secret_unreadable';
  if (error instanceof UnsignableError) return error.code;
  return undefined;
}
