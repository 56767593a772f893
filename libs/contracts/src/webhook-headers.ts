/**
 * Headers set on every webhook request (lower case), by the dispatcher
 * (`apps/dispatcher/src/delivery/webhook-request.ts`) or its HTTP client (`Host`,
 * `Content-Length`): a static header cannot take them. That module's spec checks this list
 * against what a request carries on the wire.
 */
export const RESERVED_WEBHOOK_HEADERS: readonly string[] = [
  'content-type',
  'user-agent',
  'x-signature',
  // The previous-or-next signature during a secret rotation, and the Standard Webhooks headers.
  'x-signature-next',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
];

/**
 * Headers that belong to one HTTP connection rather than to the request (lower case), and
 * every `proxy-*` one. The HTTP client refuses a request with `Transfer-Encoding`,
 * `Keep-Alive`, `Upgrade` or `Expect` (every delivery would fail); the others mean nothing to
 * the receiver, or something Sluice's own connection handling must decide.
 */
export const CONNECTION_HEADERS: readonly string[] = [
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
];

/**
 * Why a webhook's static header cannot be sent: `reserved` (Sluice sets it), `connection`
 * (a connection-level header), or undefined when it can be. Case-insensitive.
 */
export function refusedWebhookHeader(name: string): 'reserved' | 'connection' | undefined {
  const lower = name.toLowerCase();
  if (RESERVED_WEBHOOK_HEADERS.includes(lower)) return 'reserved';
  if (CONNECTION_HEADERS.includes(lower) || lower.startsWith('proxy-')) return 'connection';
  return undefined;
}
