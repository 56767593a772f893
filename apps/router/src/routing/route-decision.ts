import {
  type DestinationSettings,
  type SourceSettings,
  WEBHOOKS_DESTINATION_KIND,
} from '@app/settings';

import type { CallFacts } from './call-record';

/** Why a call produced no delivery; a label of the filtered-calls metric. */
export const FILTER_REASONS = [
  /** No source has the call's source id (deleted since the call was accepted). */
  'source_unknown',
  /** The source is disabled. */
  'source_disabled',
  /** The source has no webhook destination. */
  'no_destination',
  /** The source's destination is disabled. */
  'destination_disabled',
  /** The destination is enabled but has no webhook (the API does not allow it). */
  'no_webhooks',
  /** The call's integrations object turns webhook destinations off. */
  'integrations',
] as const;

export type FilterReason = (typeof FILTER_REASONS)[number];

/** Where a call goes: one delivery to a destination, or nowhere, with the reason. */
export type RouteDecision =
  | { readonly kind: 'deliver'; readonly destinationId: string }
  | { readonly kind: 'filtered'; readonly reason: FilterReason };

/** The settings a decision reads (the `SettingsCache` has them); frozen snapshots. */
export interface RoutingSettings {
  source(id: string): SourceSettings | undefined;
  destinationForSource(sourceId: string): DestinationSettings | undefined;
}

/** One frozen decision per reason: the hot path allocates none. */
const FILTERED = Object.fromEntries(
  FILTER_REASONS.map((reason) => [reason, Object.freeze({ kind: 'filtered', reason })]),
) as Record<FilterReason, RouteDecision>;

/**
 * Decides where a call goes from its routing facts and the current settings: to the enabled
 * webhook destination of its enabled source, unless its integrations verdict turns webhooks
 * off. Delete notifications ignore the integrations object (docs/architecture.md, "Security") but follow
 * the source's and the destination's settings like every call.
 */
export function decideRoute(
  call: Pick<CallFacts, 'sourceId' | 'type' | 'webhooks'>,
  settings: RoutingSettings,
): RouteDecision {
  const source = settings.source(call.sourceId);
  if (!source) return FILTERED.source_unknown;
  if (!source.enabled) return FILTERED.source_disabled;
  const destination = settings.destinationForSource(source.id);
  if (!destination || destination.kind !== WEBHOOKS_DESTINATION_KIND) {
    return FILTERED.no_destination;
  }
  if (!destination.enabled) return FILTERED.destination_disabled;
  if (destination.webhooks.length === 0) return FILTERED.no_webhooks;
  if (call.type !== 'delete' && !call.webhooks) return FILTERED.integrations;
  return { kind: 'deliver', destinationId: destination.id };
}
