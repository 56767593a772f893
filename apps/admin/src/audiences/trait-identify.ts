import {
  encodeIntegrationsHeader,
  enrichCall,
  HEADER,
  integrationVerdicts,
  TOPIC,
} from '@app/contracts';
import type { OutgoingRecord } from '@app/kafka';
import type { AudienceKind } from '@app/settings';

/** The audience or computed trait a sync belongs to. */
export interface TraitSource {
  readonly sourceId: string;
  readonly audienceId: string;
  readonly kind: AudienceKind;
  readonly key: string;
}

/** How identifies are stamped: the clock and the message ids are injected. */
export interface IdentifyStamp {
  /** When the sync was committed, epoch ms: the identifies' `timestamp` and `receivedAt`. */
  readonly receivedAt: number;
  readonly newMessageId: () => string;
}

/**
 * The identify that carries one user's new trait value, on `sluice.calls.v1`: enriched by
 * ingest's own function, so its body has the shape of any identify ingest accepted (`version`
 * 1, `type`, `messageId`, `timestamp`, `receivedAt`, a `context` object, `userId`, `traits`),
 * and keyed and headed as ingest does (with the integrations verdict of a call without an
 * integrations object). `context.personas` says which computation sent it, as Segment's
 * audiences do.
 */
export function traitIdentifyRecord(
  trait: TraitSource,
  userId: string,
  value: unknown,
  stamp: IdentifyStamp,
): OutgoingRecord {
  const call = enrichCall(
    'identify',
    {
      userId,
      traits: { [trait.key]: value },
      context: {
        personas: {
          computation_class: trait.kind,
          computation_key: trait.key,
          computation_id: trait.audienceId,
        },
      },
    },
    stamp,
  );
  return {
    topic: TOPIC.calls,
    key: `${trait.sourceId}:${userId}`,
    value: JSON.stringify(call),
    headers: {
      [HEADER.sourceId]: trait.sourceId,
      [HEADER.callType]: 'identify',
      [HEADER.messageId]: call.messageId as string,
      [HEADER.integrations]: encodeIntegrationsHeader(integrationVerdicts(call)),
      [HEADER.userId]: userId,
    },
  };
}
