import type { DataSource } from 'typeorm';

import { DestinationEntity } from './entities/destination.entity';
import { SourceEntity } from './entities/source.entity';
import { WebhookEntity } from './entities/webhook.entity';
import type { SettingsRows } from './settings.snapshot';

/**
 * Reads every source, destination and webhook in one read-only REPEATABLE READ transaction,
 * so the three reads see the same committed state (no webhook of a destination not yet seen).
 */
export async function loadSettingsRows(dataSource: DataSource): Promise<SettingsRows> {
  return dataSource.transaction('REPEATABLE READ', async (manager) => {
    await manager.query('SET TRANSACTION READ ONLY');
    const sources = await manager.find(SourceEntity, {
      select: { id: true, name: true, writeKey: true, enabled: true, allowedOrigins: true },
    });
    const destinations = await manager.find(DestinationEntity, {
      select: {
        id: true,
        sourceId: true,
        kind: true,
        name: true,
        enabled: true,
        sharedSecretCiphertext: true,
        filter: true,
        rateLimitPerSecond: true,
        signatureMode: true,
        previousSecretCiphertext: true,
        previousSecretExpiresAt: true,
        batchMaxCalls: true,
        batchMaxBytes: true,
        batchMaxWaitMs: true,
        orderingMaxPendingCalls: true,
        orderingMaxHoldSeconds: true,
        sendTraceparent: true,
        createdAt: true,
      },
    });
    const webhooks = await manager.find(WebhookEntity, {
      select: { id: true, destinationId: true, position: true, url: true, headers: true },
      order: { destinationId: 'ASC', position: 'ASC' },
    });
    return { sources, destinations, webhooks };
  });
}
