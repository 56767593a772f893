import { createHash } from 'node:crypto';

/** Where the libraries send calls: what the settings document tells them. */
export interface PublicAddress {
  /** Host, optional port and path prefix, then `/v1`: the libraries append `/t`, `/b`... */
  readonly apiHost: string;
  readonly protocol: 'http' | 'https';
}

/** A settings document ready to send: its bytes and their entity tag. */
export interface SettingsDocument {
  readonly body: string;
  /** A strong ETag (quoted), the same for the same bytes. */
  readonly etag: string;
}

/**
 * How long browsers and caches may reuse a settings document without asking again, in
 * seconds: it changes only when the source is disabled or removed (the calls are then refused
 * at ingest anyway) or the public address is reconfigured.
 */
export const SETTINGS_MAX_AGE_SECONDS = 300;

/** The address of an `http(s)://host[:port][/prefix]` URL, for the libraries. */
export function publicAddress(url: string): PublicAddress {
  const parsed = new URL(url);
  const prefix = parsed.pathname === '/' ? '' : parsed.pathname.replace(/\/+$/, '');
  return {
    apiHost: `${parsed.host}${prefix}/v1`,
    protocol: parsed.protocol === 'https:' ? 'https' : 'http',
  };
}

/**
 * The document `GET /v1/projects/:writeKey/settings` answers: what Segment's libraries need to
 * send to this ingest and nothing that would make them load code or send data elsewhere. The
 * `Segment.io` integration carries the write key back (analytics-next sends that `apiKey` as
 * its write key) and the address; no other integration (each would load a destination's
 * code), an empty plan, no middleware or remote plugins, and a metrics sample rate of 0 (the
 * browser library otherwise reports its own metrics, by default to Segment's host).
 */
export function settingsDocument(writeKey: string, address: PublicAddress): SettingsDocument {
  const body = JSON.stringify({
    integrations: {
      'Segment.io': { apiKey: writeKey, apiHost: address.apiHost, protocol: address.protocol },
    },
    plan: {},
    edgeFunction: {},
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0, host: address.apiHost },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
  });
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return { body, etag: `"${digest}"` };
}

/** Whether an `If-None-Match` header names this ETag (or `*`): the cached copy is current. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*');
}
