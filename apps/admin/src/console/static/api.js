// The admin API as the console calls it: same origin, the tab's token, errors as ApiError.
// The token lives in memory and in this tab's session storage, nowhere else.

const TOKEN_KEY = 'sluice.console.token';
const API = '/admin/v1';

/** The admin token of this tab: in memory, and in sessionStorage once the API accepted it. */
let token = sessionStorage.getItem(TOKEN_KEY);
/** What a refused token does (the router signs the tab out); set once by app.js. */
let tokenRefused = () => {};

export function hasToken() {
  return Boolean(token);
}

/** Keeps a token the API accepted, for this tab only. */
export function keepToken(candidate) {
  token = candidate;
  sessionStorage.setItem(TOKEN_KEY, candidate);
}

export function forgetToken() {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Sets what a 401 or 403 to a call with the tab's token does, with a message for the user. */
export function onTokenRefused(handler) {
  tokenRefused = handler;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** One call to the admin API with `bearer`; throws ApiError for anything but 2xx. */
export async function request(method, path, body, bearer) {
  const headers = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'the admin API cannot be reached');
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    throw new ApiError(
      res.status,
      typeof json?.code === 'string' ? json.code : `http_${res.status}`,
      typeof json?.message === 'string' ? json.message : text.slice(0, 200) || res.statusText,
    );
  }
  return json;
}

/** A call with the tab's token; a refused token signs the tab out. */
export async function api(method, path, body) {
  try {
    return await request(method, path, body, token);
  } catch (error) {
    // A read-only token refused a change is still a good token: the page shows the error.
    const readOnly = error instanceof ApiError && error.code === 'token_read_only';
    if (error instanceof ApiError && !readOnly && (error.status === 401 || error.status === 403)) {
      tokenRefused(`The admin API no longer accepts the token (${error.message}). Sign in again.`);
    }
    throw error;
  }
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') q.set(name, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}
