import type { CallType } from './calls';
import { asJsonObject } from './json';
import { parseDateTime } from './timestamps';

/** What enrichment needs beyond the call itself (ingest's, and the admin app's syncs). */
export interface EnrichContext {
  /** When ingest received the request, epoch ms. */
  readonly receivedAt: number;
  /** The client's address, when known (HTTP). */
  readonly ip?: string;
  readonly newMessageId: () => string;
  /** A batch's own `context` and `integrations`, merged under each message's. */
  readonly batchContext?: Record<string, unknown>;
  readonly batchIntegrations?: Record<string, unknown>;
  /**
   * A batch's own `sentAt`, already checked to be a date-time: the libraries set it once per
   * batch, not per call. A call without its own takes it.
   */
  readonly batchSentAt?: string;
}

/** Page fields filled into `properties` from `context.page` when absent. */
const PAGE_FIELDS = ['path', 'referrer', 'title', 'url'] as const;

/**
 * Enriches a valid call in place (docs/api.md) and returns it, already in the shape
 * of the outbound webhook body (docs/architecture.md, "Delivery semantics"), so that later stages pass its bytes on
 * without parsing: `version` 1 (a sent value is overwritten); `type`; `messageId`
 * when absent; `receivedAt`; `timestamp` from the server's clock when absent, or corrected for
 * the client's clock skew when `sentAt` is given too, the call's own or else its batch's
 * (`originalTimestamp` keeps the sent value); `context` always an object, with the batch's context merged under it and
 * `context.ip` filled when absent; the batch's integrations merged under the call's;
 * `writeKey` removed.
 */
export function enrichCall(
  type: CallType,
  call: Record<string, unknown>,
  ctx: EnrichContext,
): Record<string, unknown> {
  delete call.writeKey;
  call.version = 1;
  call.type = type;
  if (call.messageId === undefined) call.messageId = ctx.newMessageId();
  const receivedAt = new Date(ctx.receivedAt).toISOString();
  call.receivedAt = receivedAt;
  if (call.sentAt === undefined && ctx.batchSentAt !== undefined) call.sentAt = ctx.batchSentAt;
  applyTimestamp(call, ctx.receivedAt, receivedAt);
  const context = { ...ctx.batchContext, ...(call.context as Record<string, unknown> | undefined) };
  if (context.ip === undefined && ctx.ip !== undefined) context.ip = ctx.ip;
  call.context = context;
  if (ctx.batchIntegrations) {
    call.integrations = {
      ...ctx.batchIntegrations,
      ...(call.integrations as Record<string, unknown> | undefined),
    };
  }
  shapeBody(type, call, context);
  return call;
}

/**
 * The objects each type always carries: `properties` for track and page (a page's filled
 * from `context.page` where absent), `traits` for identify and group.
 */
function shapeBody(
  type: CallType,
  call: Record<string, unknown>,
  context: Record<string, unknown>,
): void {
  if (type === 'track' || type === 'page') call.properties ??= {};
  if (type === 'identify' || type === 'group') call.traits ??= {};
  if (type !== 'page') return;
  const page = asJsonObject(context.page);
  if (!page) return;
  const properties = call.properties as Record<string, unknown>;
  for (const field of PAGE_FIELDS) {
    const value = page[field];
    if (properties[field] === undefined && value !== undefined) properties[field] = value;
  }
}

function applyTimestamp(
  call: Record<string, unknown>,
  receivedAtMs: number,
  receivedAt: string,
): void {
  const timestamp = call.timestamp as string | undefined;
  const sentAt = call.sentAt as string | undefined;
  if (timestamp === undefined) {
    call.timestamp = receivedAt;
    return;
  }
  if (sentAt === undefined) return; // kept as sent, however old (historical imports)
  const skewMs = parseDateTime(sentAt) - parseDateTime(timestamp);
  call.originalTimestamp = timestamp;
  call.timestamp = new Date(receivedAtMs - skewMs).toISOString();
}
