import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/** How an error of a given status is answered instead (e.g. an oversize body as 400). */
export type ErrorOverrides = Readonly<Record<number, { status: number; code: string }>>;

/** Codes for the statuses the framework answers on its own. */
const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'request_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'too_many_requests',
  503: 'unavailable',
};

/**
 * Fields an HTTP exception's own answer may add to `{ code, message }`, when strings: where in
 * the body the bad part is, and the rule it broke (the admin API's filter errors).
 */
const DETAIL_FIELDS = ['path', 'rule'] as const;

/** An error answer's body. */
type ErrorBody = { code: string; message: string } & Partial<
  Record<(typeof DETAIL_FIELDS)[number], string>
>;

/**
 * Every error answer is JSON `{ code, message }` (plus `path` and `rule` when an HTTP
 * exception names them). HTTP exceptions keep their status (and
 * their own `code` when they carry one); framework errors (Fastify's body limit, parsing)
 * keep theirs unless overridden; anything else is a 500 whose details go only to the log.
 */
@Catch()
export class JsonErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonErrorFilter.name);

  constructor(private readonly overrides: ErrorOverrides = {}) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.answer(error);
    void reply.status(status).send(body);
  }

  private answer(error: unknown): { status: number; body: ErrorBody } {
    if (error instanceof HttpException) {
      const response = error.getResponse();
      const own = typeof response === 'object' ? (response as Record<string, unknown>) : {};
      const code = typeof own.code === 'string' ? own.code : undefined;
      const answer = this.known(error.getStatus(), code, messageOf(response, error.message));
      for (const field of DETAIL_FIELDS) {
        const value = own[field];
        if (typeof value === 'string') answer.body[field] = value;
      }
      return answer;
    }
    const framework = error as { statusCode?: unknown; message?: unknown };
    if (typeof framework.statusCode === 'number' && framework.statusCode < 500) {
      return this.known(framework.statusCode, undefined, String(framework.message));
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      body: { code: 'internal_error', message: 'an unexpected error occurred' },
    };
  }

  private known(
    status: number,
    code: string | undefined,
    message: string,
  ): { status: number; body: ErrorBody } {
    const override = this.overrides[status];
    return {
      status: override?.status ?? status,
      body: { code: override?.code ?? code ?? codeFor(status), message },
    };
  }
}

function codeFor(status: number): string {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

/** Nest's validation errors carry a list of messages; join them. */
function messageOf(response: string | object, fallback: string): string {
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : fallback;
}
