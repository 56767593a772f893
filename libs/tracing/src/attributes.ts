/**
 * Span attribute names, defined once (docs/operations.md lists them). Standard names where the
 * semantic conventions have one; Sluice's own under `sluice.`. None carries a write key, a
 * secret, a header value or a webhook's path or query.
 */
export const ATTRIBUTE = {
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  httpRoute: 'http.route',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlScheme: 'url.scheme',
  errorType: 'error.type',
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  messagingOperation: 'messaging.operation.type',
  kafkaPartition: 'messaging.destination.partition.id',
  kafkaOffset: 'messaging.kafka.offset',
  sourceId: 'sluice.source.id',
  destinationId: 'sluice.destination.id',
  messageId: 'sluice.message.id',
  callType: 'sluice.call.type',
  callsAccepted: 'sluice.calls.accepted',
  callsRejected: 'sluice.calls.rejected',
  routeOutcome: 'sluice.route.outcome',
  destinations: 'sluice.route.destinations',
  attempt: 'sluice.delivery.attempt',
  retryTier: 'sluice.delivery.tier',
  deliveryOutcome: 'sluice.delivery.outcome',
  webhookId: 'sluice.webhook.id',
  webhookResult: 'sluice.webhook.result',
  latencyMs: 'sluice.webhook.latency_ms',
  batchId: 'sluice.batch.id',
  batchCalls: 'sluice.batch.calls',
} as const;
