import { ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';

/** 404 with a stable code. */
export function notFound(
  what:
    | 'source'
    | 'destination'
    | 'webhook'
    | 'deletion_request'
    | 'audience'
    | 'computed_trait'
    | 'sync'
    | 'delivery'
    | 'replay',
  detail = '',
): NotFoundException {
  return new NotFoundException({
    code: `${what}_not_found`,
    message: `no such ${what.replace('_', ' ')}${detail}`,
  });
}

/** 503 when Kafka did not acknowledge what had to be published; nothing was committed. */
export function kafkaUnavailable(what: string): ServiceUnavailableException {
  return new ServiceUnavailableException({
    code: 'kafka_unavailable',
    message: `${what} could not be published to Kafka; nothing was committed, retry later`,
  });
}

/** 409 with a stable code. */
export function conflict(code: string, message: string): ConflictException {
  return new ConflictException({ code, message });
}

/** PostgreSQL's error codes the admin maps to answers. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_CHECK_VIOLATION = '23514';

/** The SQLSTATE of a failed query, when it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { driverError?: { code?: unknown }; code?: unknown }).driverError?.code;
  return typeof code === 'string' ? code : undefined;
}
