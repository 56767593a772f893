import { applyDecorators, HttpStatus, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse } from '@nestjs/swagger';

/** Every error answer of the admin API. */
export class ErrorAnswer {
  @ApiProperty({ description: 'Stable, machine-readable', example: 'source_not_found' })
  code!: string;

  @ApiProperty({ description: 'For people; may change', example: 'no such source' })
  message!: string;
}

/** The error statuses a route may answer, beside 401 and 403 which every route may. */
export type ErrorStatus = 400 | 404 | 409 | 413 | 503;

/** What each error status means, in the document. */
const ERROR_MEANING: Readonly<Record<ErrorStatus | 401 | 403, string>> = {
  400: 'The request is invalid: `invalid_request` names each field and rule, or a route-specific code',
  401: '`unauthorized`: no bearer token',
  403: '`forbidden`: the token is not valid; `token_read_only`: a read-only token asked for a change',
  404: 'Something the path names does not exist (`<thing>_not_found`)',
  409: 'The change conflicts with the current state (the code says which rule)',
  413: '`request_too_large`: the body is larger than 1 MiB',
  503: '`kafka_unavailable`: Kafka did not acknowledge in time; nothing was committed',
};

/** A route's success answer: its status and body (none for 204). */
export interface SuccessAnswer {
  readonly status: 200 | 201 | 202 | 204;
  readonly type?: Type;
  readonly isArray?: boolean;
  readonly description?: string;
}

/**
 * Describes a route's answers in the OpenAPI document: its success answer with its schema, and
 * its errors with the `{code, message}` schema, 401 and 403 always (every route needs a token).
 */
export function ApiAnswers(ok: SuccessAnswer, ...errors: ErrorStatus[]): MethodDecorator {
  const statuses = [...new Set<ErrorStatus | 401 | 403>([...errors, 401, 403])];
  return applyDecorators(
    ApiExtraModels(ErrorAnswer),
    ApiResponse({
      status: ok.status,
      type: ok.type,
      isArray: ok.isArray,
      description: ok.description ?? HttpStatus[ok.status],
    }),
    ...statuses.map((status) =>
      ApiResponse({ status, type: ErrorAnswer, description: ERROR_MEANING[status] }),
    ),
  );
}
