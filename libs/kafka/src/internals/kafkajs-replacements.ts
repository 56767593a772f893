import { installCoordinatorReplacement } from './coordinator.replacement';
import { installDisconnectReplacement } from './disconnect.replacement';
import { installFetchResponseReplacement } from './fetch-response.replacement';
import { installFetchWaitReplacement } from './fetch-wait.replacement';
import { installJoinConnectionReplacement } from './join-connection.replacement';
import { installMemberIdReplacement } from './member-id.replacement';
import { installProduceRequestReplacement } from './produce-request.replacement';
import { installRejoinReplacement } from './rejoin.replacement';
import { installRequestQueueReplacement } from './request-queue.replacement';
import { installRequestTimeoutReplacement } from './request-timeout.replacement';

/**
 * Installs every replacement of kafkajs internals (docs/kafkajs-replacements.md), once per
 * process and before any kafkajs client exists: `KafkaConnection`'s constructor calls it.
 * @throws {KafkajsVersionError} when kafkajs is not the pinned version: start-up stops there
 */
export function installKafkajsReplacements(): void {
  installRequestQueueReplacement();
  installRequestTimeoutReplacement();
  installProduceRequestReplacement();
  installFetchResponseReplacement();
  installMemberIdReplacement();
  installFetchWaitReplacement();
  installCoordinatorReplacement();
  installDisconnectReplacement();
  installRejoinReplacement();
  installJoinConnectionReplacement();
}
