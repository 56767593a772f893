import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { BreakerStates } from '../destinations/breaker-states';
import {
  DestinationHealthView,
  destinationHealthView,
  HEALTH_WINDOWS,
  HealthRecord,
} from './destination-health';

/**
 * Every request to a webhook of the destination (one per webhook per attempt, from each
 * attempt's `webhooks` in the ledger's history) of the deliveries first attempted since $2,
 * read through the destination index; figures per window (those since $3 for the hour) for
 * the destination and per webhook. An attempt without a request (the breaker open, the
 * destination disabled) has no `webhooks` and is not counted.
 */
const HEALTH_SQL = `
  WITH requests AS (
    SELECT (h->>'at')::timestamptz AS "at", w->>'webhookId' AS "webhook_id", w->>'kind' AS "kind",
      (w->>'latencyMs')::float8 AS "latency_ms",
      jsonb_build_object('at', h->>'at', 'webhookId', w->>'webhookId', 'kind', w->>'kind',
        'reason', w->>'reason', 'status', (w->>'status')::int, 'detail', w->>'detail') AS "error"
    FROM "delivery_ledger" l
      CROSS JOIN LATERAL jsonb_array_elements(l."history") AS h
      CROSS JOIN LATERAL jsonb_array_elements(COALESCE(h->'webhooks', '[]'::jsonb)) AS w
    WHERE l."destination_id" = $1 AND l."first_attempt_at" >= $2
  ), windowed AS (
    SELECT 'day' AS "window", r.* FROM requests r
    UNION ALL
    SELECT 'hour', r.* FROM requests r WHERE r."at" >= $3
  )
  SELECT "window", "webhook_id", count(*)::text AS "attempts",
    (count(*) FILTER (WHERE "kind" = 'success'))::text AS "successes",
    percentile_cont(0.5) WITHIN GROUP (ORDER BY "latency_ms") AS "p50",
    percentile_cont(0.99) WITHIN GROUP (ORDER BY "latency_ms") AS "p99",
    (array_agg("error" ORDER BY "at" DESC) FILTER (WHERE "kind" <> 'success'))[1] AS "last_error"
  FROM windowed
  GROUP BY GROUPING SETS (("window"), ("window", "webhook_id"))`;

/** A destination's delivery health from the ledger, with its breaker from the dispatchers. */
@Injectable()
export class DestinationHealthService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly breakers: BreakerStates,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async health(destinationId: string): Promise<DestinationHealthView> {
    const [destination] = await this.dataSource.query<
      { id: string; name: string; enabled: boolean }[]
    >(`SELECT "id", "name", "enabled" FROM "destination" WHERE "id" = $1`, [destinationId]);
    if (destination === undefined) throw notFound('destination');
    const webhooks = await this.dataSource.query<{ id: string; url: string }[]>(
      `SELECT "id", "url" FROM "webhook" WHERE "destination_id" = $1 ORDER BY "position"`,
      [destinationId],
    );
    const now = this.clock.now();
    const [hour, day] = HEALTH_WINDOWS.map((w) => new Date(now - w.ms));
    const records = await this.dataSource.query<HealthRecord[]>(HEALTH_SQL, [
      destination.id.toLowerCase(),
      day,
      hour,
    ]);
    // GROUPING SETS leaves the grouped-away webhook id null: the destination's own row.
    return destinationHealthView(
      destination,
      webhooks,
      records,
      this.breakers.view(destination.id, now),
    );
  }
}
