/** One POST of a request body. */
export interface TransportRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Abort when no whole answer came within this time. */
  readonly timeoutMs: number;
}

/** What the server answered. */
export interface TransportResponse {
  readonly status: number;
  /** The `Retry-After` header, when present. */
  readonly retryAfter?: string;
  readonly body: string;
}

/**
 * Sends one request. Rejects on network errors and timeouts (both retried); resolves with
 * any HTTP answer, which the caller classifies. Replaceable through the `transport` option
 * (a proxy, a custom agent, a test stub).
 */
export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/**
 * The default transport: Node's built-in `fetch` (Node 18 and later). It needs no dependency,
 * keeps connections alive between requests, and its idle sockets and `AbortSignal.timeout`
 * timers do not hold the process open, which the library promises. Redirects are not
 * followed: a tracking endpoint that redirects is a configuration error, reported as such.
 */
export const fetchTransport: Transport = async (request) => {
  const response = await fetch(request.url, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(request.timeoutMs),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after') ?? undefined,
    body: await response.text(),
  };
};
