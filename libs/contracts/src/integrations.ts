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

/** The longest destination name; a longer key of an integrations object names none. */
export const MAX_DESTINATION_NAME_CHARS = 200;

/**
 * A call's integrations verdicts for webhook destinations: the verdict of the kind (`All`
 * and `Webhooks`), and the other keys whose verdict differs from it (`false`, or `true` or an
 * object), which may be destination names. A destination's own key, when present, wins over the kind's
 * verdict (docs/api.md, "Destinations and the integrations object").
 */
export interface IntegrationVerdicts {
  /** Whether webhook destinations not named on their own take the call. */
  readonly webhooks: boolean;
  /** Verdicts by other key, or undefined when the object names nothing else. */
  readonly named: ReadonlyMap<string, boolean> | undefined;
}

const ALL_ON: IntegrationVerdicts = Object.freeze({ webhooks: true, named: undefined });
const ALL_OFF: IntegrationVerdicts = Object.freeze({ webhooks: false, named: undefined });

/** The verdicts of a call's integrations object (top level, else `context.integrations`). */
export function integrationVerdicts(call: {
  integrations?: unknown;
  context?: unknown;
}): IntegrationVerdicts {
  const webhooks = integrationAllows(call, WEBHOOKS_INTEGRATION);
  const integrations =
    asJsonObject(call.integrations) ?? asJsonObject(asJsonObject(call.context)?.integrations);
  let named: Map<string, boolean> | undefined;
  for (const key in integrations) {
    if (key === 'All' || key === WEBHOOKS_INTEGRATION) continue;
    if (key.length > MAX_DESTINATION_NAME_CHARS) continue;
    const value = integrations[key];
    const verdict = value === false ? false : value === true || !!asJsonObject(value);
    // Other values count as absent; a verdict equal to the kind's changes nothing.
    if ((value !== false && !verdict) || verdict === webhooks) continue;
    (named ??= new Map()).set(key, verdict);
  }
  if (named) return { webhooks, named };
  return webhooks ? ALL_ON : ALL_OFF;
}

/** Whether a webhook destination of this name takes a call with these verdicts. */
export function destinationAllowed(verdicts: IntegrationVerdicts, name: string): boolean {
  return verdicts.named?.get(name) ?? verdicts.webhooks;
}

/** The two values written when an object names nothing but `All` and `Webhooks`. */
const WEBHOOKS_ON = JSON.stringify({ [WEBHOOKS_INTEGRATION]: true });
const WEBHOOKS_OFF = JSON.stringify({ [WEBHOOKS_INTEGRATION]: false });

/**
 * The `sluice-integrations` header of a call record: a JSON object of boolean verdicts,
 * `Webhooks` first, then the other keys named, computed once at ingest. The router compares
 * the two common values as strings and parses the header only when a call names more.
 */
export function encodeIntegrationsHeader(verdicts: IntegrationVerdicts): string {
  if (!verdicts.named) return verdicts.webhooks ? WEBHOOKS_ON : WEBHOOKS_OFF;
  const object: Record<string, boolean> = { [WEBHOOKS_INTEGRATION]: verdicts.webhooks };
  for (const [key, verdict] of verdicts.named) object[key] = verdict;
  return JSON.stringify(object);
}

/**
 * The verdicts in an integrations header: all on when the header is absent (all destinations
 * are on by default); `Webhooks` true when the header does not name it; undefined when it is
 * malformed (not a JSON object, or a verdict that is not a boolean).
 */
export function decodeIntegrationsHeader(
  header: string | undefined,
): IntegrationVerdicts | undefined {
  if (header === undefined || header === WEBHOOKS_ON) return ALL_ON;
  if (header === WEBHOOKS_OFF) return ALL_OFF;
  let parsed: unknown;
  try {
    parsed = JSON.parse(header);
  } catch {
    return undefined;
  }
  const object = asJsonObject(parsed);
  if (!object) return undefined;
  let webhooks = true;
  let named: Map<string, boolean> | undefined;
  for (const key in object) {
    const verdict = object[key];
    if (typeof verdict !== 'boolean') return undefined;
    if (key === WEBHOOKS_INTEGRATION) webhooks = verdict;
    else (named ??= new Map()).set(key, verdict);
  }
  if (named) return { webhooks, named };
  return webhooks ? ALL_ON : ALL_OFF;
}
