import { asJsonObject } from './json';

/** The name this destination kind answers to in a call's `integrations` object. */
export const WEBHOOKS_INTEGRATION = 'Webhooks';

/**
 * Whether a call's `integrations` object lets it reach the destination named `name`
 * (docs/architecture.md, "Security"). Read at the top level, falling back to `context.integrations`. All
 * destinations are on by default; `All: false` turns all off except those named with `true`
 * or an object; a destination named with `false` is off; other values count as absent; names
 * are case-sensitive.
 */
export function integrationAllows(
  call: { integrations?: unknown; context?: unknown },
  name: string,
): boolean {
  const integrations =
    asJsonObject(call.integrations) ?? asJsonObject(asJsonObject(call.context)?.integrations);
  if (!integrations) return true;
  const own = integrations[name];
  if (own === false) return false;
  if (own === true || asJsonObject(own)) return true;
  return integrations.All !== false;
}

/** The two values ingest writes, recognised by the router without parsing. */
const WEBHOOKS_ON = JSON.stringify({ [WEBHOOKS_INTEGRATION]: true });
const WEBHOOKS_OFF = JSON.stringify({ [WEBHOOKS_INTEGRATION]: false });

/**
 * The `sluice-integrations` header of a call record: a JSON object of verdicts per
 * destination name, computed once at ingest so that the router never parses the call.
 */
export function encodeIntegrationsHeader(webhooks: boolean): string {
  return webhooks ? WEBHOOKS_ON : WEBHOOKS_OFF;
}

/**
 * The webhook destinations' verdict in an integrations header: true when the header is
 * absent (all destinations are on by default) or does not name webhooks, undefined when it
 * is malformed (not a JSON object, or a verdict that is not a boolean).
 */
export function decodeIntegrationsHeader(header: string | undefined): boolean | undefined {
  if (header === undefined || header === WEBHOOKS_ON) return true;
  if (header === WEBHOOKS_OFF) return false;
  let verdicts: unknown;
  try {
    verdicts = JSON.parse(header);
  } catch {
    return undefined;
  }
  const object = asJsonObject(verdicts);
  if (!object) return undefined;
  const own = object[WEBHOOKS_INTEGRATION];
  if (own === undefined) return true;
  return typeof own === 'boolean' ? own : undefined;
}
