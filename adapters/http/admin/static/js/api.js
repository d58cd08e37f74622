// api.js: the one way the screens reach the REST API. It adds the
// credentials (an application password over Basic auth, or WordPress's
// cookie and X-WP-Nonce inside wp-admin), decodes JSON and turns error
// answers into ApiError with the field messages of data.errors.

const KEY = 'mailsvc.auth';

const state = {
  base: new URL('../wp-json/mailsvc/v1', location.href).href.replace(/\/$/, ''),
  mode: 'basic', // or 'cookie'
  user: '',
  pass: '',
  nonce: '',
  site: '', // a network's site filter (Network Admin's Mail page)
};

/** ApiError is an error answer: status, code, message and field errors. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `The service answered ${status}.`);
    this.status = status;
    this.code = (body && body.code) || 'http_' + status;
    this.errors = (body && body.data && body.data.errors) || {};
  }
}

/**
 * configure sets where the API is and how to authenticate; site, on a
 * multisite network's Network Admin page, limits what is read to one site.
 */
export function configure({ base, nonce, site } = {}) {
  if (base) state.base = base.replace(/\/$/, '');
  if (site) state.site = String(site);
  if (nonce) { state.mode = 'cookie'; state.nonce = nonce; }
  if (state.mode === 'basic') {
    try { Object.assign(state, JSON.parse(sessionStorage.getItem(KEY) || '{}')); } catch { /* none */ }
  }
}

/** mode is 'cookie' inside wp-admin, 'basic' standalone. */
export const mode = () => state.mode;
/** signedIn reports whether there are credentials to try. */
export const signedIn = () => state.mode === 'cookie' || !!state.pass;
/** user is the signed-in user name (standalone). */
export const user = () => state.user;
/** base is the REST namespace URL. */
export const base = () => state.base;

/** signIn keeps the credentials for this tab only (sessionStorage). */
export function signIn(user, pass) {
  Object.assign(state, { user, pass });
  sessionStorage.setItem(KEY, JSON.stringify({ user, pass }));
}

/** signOut forgets the credentials. */
export function signOut() {
  Object.assign(state, { user: '', pass: '' });
  sessionStorage.removeItem(KEY);
}

function basic(user, pass) {
  const bytes = new TextEncoder().encode(`${user}:${pass}`);
  return 'Basic ' + btoa(String.fromCharCode(...bytes));
}

/**
 * url builds an API URL from a path and query parameters (empty ones left
 * out). The parameters are appended as they are, never through
 * URLSearchParams: that would re-encode the whole query, and with plain
 * permalinks the base is ?rest_route=/mailsvc/v1, whose slashes must stay
 * literal (%2Fmailsvc%2F... is not what proxies and WordPress match).
 */
export function url(path, query) {
  const all = state.site ? { site: state.site, ...(query || {}) } : (query || {});
  const pairs = Object.entries(all)
    .filter(([, v]) => v !== '' && v !== null && v !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v));
  const u = state.base + path;
  return new URL(pairs.length ? u + (u.includes('?') ? '&' : '?') + pairs.join('&') : u).href;
}

let onAuthFailure = () => {};
/** onAuth sets what happens on 401/403 (the app shows sign-in or access denied). */
export function onAuth(f) { onAuthFailure = f; }

/** authHeaders answers the credentials of a request (for downloads). */
export function authHeaders() {
  if (state.mode === 'cookie') return { 'X-WP-Nonce': state.nonce };
  return state.pass ? { Authorization: basic(state.user, state.pass) } : {};
}

/** request calls the API and answers {data, headers, status}; errors throw ApiError. */
export async function request(method, path, { query, body, quiet } = {}) {
  const headers = { Accept: 'application/json', ...authHeaders() };
  const init = { method, headers, credentials: state.mode === 'cookie' ? 'include' : 'omit' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url(path, query), init);
  } catch (e) {
    throw new ApiError(0, { code: 'network', message: 'The service could not be reached. Is it running?' });
  }
  const fresh = res.headers.get('X-WP-Nonce');
  if (fresh && state.mode === 'cookie') state.nonce = fresh;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) {
    const err = new ApiError(res.status, data && typeof data === 'object' ? data : null);
    if (!quiet && (res.status === 401 || err.code === 'rest_forbidden')) onAuthFailure(err);
    throw err;
  }
  return { data, headers: res.headers, status: res.status };
}

/** get answers the decoded body of a GET. */
export const get = async (path, query, opts) => (await request('GET', path, { query, ...opts })).data;
/** post answers the decoded body of a POST. */
export const post = async (path, body, opts) => (await request('POST', path, { body, ...opts })).data;
/** put answers the decoded body of a PUT. */
export const put = async (path, body) => (await request('PUT', path, { body })).data;
/** del answers the decoded body of a DELETE. */
export const del = async (path, body) => (await request('DELETE', path, { body })).data;

/** list answers a page of a list with its totals from the headers. */
export async function list(path, query) {
  const { data, headers } = await request('GET', path, { query });
  return {
    items: data || [],
    total: Number(headers.get('X-WP-Total') || 0),
    pages: Number(headers.get('X-WP-TotalPages') || 0),
    capped: headers.get('X-Mailsvc-Total-Capped') === 'true',
    partial: headers.get('X-Mailsvc-Search-Partial') === 'true',
  };
}
