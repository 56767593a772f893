import {
  destinationAllowed,
  filterAccepts,
  type FilterSubject,
  type IntegrationVerdicts,
} from '@app/contracts';
import type { DestinationSettings, SourceSettings } from '@app/settings';

/** Why a call produced no delivery at all; a label of the filtered-calls metric. */
export const FILTER_REASONS = [
  /** No source has the call's source id (deleted since the call was accepted). */
  'source_unknown',
  /** The source is disabled. */
  'source_disabled',
  /** The source has no webhook destination. */
  'no_destination',
  /** Every destination of the source is disabled. */
  'destination_disabled',
  /** Every enabled destination has no webhook (the API does not allow it). */
  'no_webhooks',
  /** The call's integrations object turns every destination of the source off. */
  'integrations',
  /** Every destination's filter drops the call. */
  'filter',
  /** Each destination skipped it, for different reasons. */
  'no_match',
] as const;

export type FilterReason = (typeof FILTER_REASONS)[number];

/** Why one destination takes no delivery of a call. */
export type SkipReason = 'destination_disabled' | 'no_webhooks' | 'integrations' | 'filter';

/** A destination of the call's source that takes no delivery of it. */
export interface Skip {
  readonly destinationId: string;
  readonly reason: SkipReason;
}

/**
 * Where a call goes: one delivery to each destination that takes it (oldest destination
 * first), or nowhere with the reason; either way the destinations skipped, with theirs.
 */
export type RouteDecision =
  | {
      readonly kind: 'deliver';
      readonly destinationIds: readonly string[];
      readonly skipped: readonly Skip[];
    }
  | { readonly kind: 'filtered'; readonly reason: FilterReason; readonly skipped: readonly Skip[] };

/** The settings a decision reads (the `SettingsCache` has them); frozen snapshots. */
export interface RoutingSettings {
  source(id: string): SourceSettings | undefined;
  /** A source's destinations, oldest first. */
  destinationsForSource(sourceId: string): readonly DestinationSettings[];
}

/** What a decision reads of a call: its source, integrations verdicts, and what filters read. */
export interface RoutableCall extends FilterSubject {
  readonly sourceId: string;
  readonly integrations: IntegrationVerdicts;
  /** A delete notification's one destination (deletion requests notify each on its own). */
  readonly destinationId?: string;
}

const NONE: readonly Skip[] = Object.freeze([]);

/** One frozen decision per reason without skips: the common paths allocate none. */
const FILTERED = Object.fromEntries(
  FILTER_REASONS.map((reason) => [
    reason,
    Object.freeze({ kind: 'filtered', reason, skipped: NONE }),
  ]),
) as Record<FilterReason, RouteDecision>;

/**
 * Decides where a call goes from its routing facts and the current settings: to every
 * enabled destination (with a webhook) of its enabled source that its integrations verdicts
 * and the destination's filter let it reach. Delete notifications ignore the integrations
 * object and filters (every destination may hold the user's data) but follow the source's and
 * the destinations' settings like every call (docs/architecture.md, "Security"); one that
 * names its destination (the admin app's, one per destination) goes there alone.
 */
export function decideRoute(call: RoutableCall, settings: RoutingSettings): RouteDecision {
  const source = settings.source(call.sourceId);
  if (!source) return FILTERED.source_unknown;
  if (!source.enabled) return FILTERED.source_disabled;
  const destinations = forCall(call, settings.destinationsForSource(source.id));
  if (destinations.length === 0) return FILTERED.no_destination;
  let chosen: string[] | undefined;
  let skipped: Skip[] | undefined;
  for (const destination of destinations) {
    const reason = skipReason(call, destination);
    if (reason === undefined) (chosen ??= []).push(destination.id);
    else (skipped ??= []).push({ destinationId: destination.id, reason });
  }
  if (chosen) return { kind: 'deliver', destinationIds: chosen, skipped: skipped ?? NONE };
  const all = skipped ?? NONE;
  const reason = all.every((s) => s.reason === all[0].reason) ? all[0].reason : 'no_match';
  return { kind: 'filtered', reason, skipped: all };
}

/** The destinations a call may reach: a delete notification naming one, that one alone. */
function forCall(
  call: RoutableCall,
  destinations: readonly DestinationSettings[],
): readonly DestinationSettings[] {
  if (call.type !== 'delete' || call.destinationId === undefined) return destinations;
  return destinations.filter((d) => d.id === call.destinationId);
}

/** Why a destination takes no delivery of the call, or undefined when it takes one. */
function skipReason(call: RoutableCall, destination: DestinationSettings): SkipReason | undefined {
  if (!destination.enabled) return 'destination_disabled';
  if (destination.webhooks.length === 0) return 'no_webhooks';
  if (call.type === 'delete') return undefined;
  if (!destinationAllowed(call.integrations, destination.name)) return 'integrations';
  if (destination.filter && !filterAccepts(destination.filter, call)) return 'filter';
  return undefined;
}
