export { Analytics } from './analytics';
export type {
  AliasParams,
  CallType,
  CommonParams,
  Fields,
  GroupParams,
  Id,
  IdentifyParams,
  PageParams,
  ScreenParams,
  TrackParams,
  UserParams,
} from './calls';
export { AnalyticsError } from './errors';
export type { AnalyticsErrorCode, AnalyticsErrorDetails } from './errors';
export { LIBRARY } from './library';
export { MAX_CALL_BYTES, MAX_REQUEST_BYTES } from './limits';
export type { AnalyticsOptions } from './options';
export type { Transport, TransportRequest, TransportResponse } from './transport';
