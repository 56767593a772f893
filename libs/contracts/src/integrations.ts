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
