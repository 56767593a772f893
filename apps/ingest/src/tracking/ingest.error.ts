/** Stable codes of the answers ingest refuses calls with. */
export type IngestErrorCode =
  | 'invalid_json'
  | 'invalid_body'
  | 'invalid_call'
  | 'invalid_batch'
  | 'call_too_large'
  | 'call_too_deep'
  | 'request_too_large'
  | 'unsupported_encoding'
  | 'unsupported_media_type'
  | 'unauthorized'
  | 'origin_not_allowed'
  | 'kafka_unavailable';

const STATUS: Record<IngestErrorCode, number> = {
  invalid_json: 400,
  invalid_body: 400,
  invalid_call: 400,
  invalid_batch: 400,
  call_too_large: 400,
  call_too_deep: 400,
  request_too_large: 400,
  unsupported_encoding: 415,
  unsupported_media_type: 415,
  unauthorized: 401,
  origin_not_allowed: 403,
  kafka_unavailable: 503,
};

/** A request ingest refuses; the controller answers `{ code, message }` with `status`. */
export class IngestError extends Error {
  readonly status: number;

  constructor(
    readonly code: IngestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'IngestError';
    this.status = STATUS[code];
  }
}
