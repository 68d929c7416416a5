// The gateway token and the REST calls.
//
// The token comes from the login form or once from the address fragment (#token=...),
// lives in sessionStorage (this tab only) and leaves as an Authorization header; it is
// never put in a URL. Once the gateway refuses it, every call fails at once without a
// request until the person signs in again: a wrong token never turns into a retry storm.

const KEY = "beamclaw.token";

export class RefusedError extends Error {}
export class UnreachableError extends Error {}
export class HttpError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let refused = false;
let onRefused = () => {};

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => {
    sessionStorage.setItem(KEY, value);
    refused = false;
  },
  clear: () => sessionStorage.removeItem(KEY),
};

/** Take a token from `#token=...` once and remove the fragment from the address bar. */
export function captureFragmentToken() {
  const fragment = location.hash.replace(/^#/, "");
  if (!fragment) return false;
  const value = new URLSearchParams(fragment).get("token");
  history.replaceState(null, "", location.pathname + location.search);
  if (value) token.set(value);
  return Boolean(value);
}

export function setRefusalHandler(handler) {
  onRefused = handler;
}

/** Report a refusal (from REST or the WebSocket) once and stop calling the gateway. */
export function refuse() {
  if (refused) return;
  refused = true;
  onRefused();
}

export function isRefused() {
  return refused;
}

/** A JSON call to the gateway; RefusedError on 401, UnreachableError when it is down. */
export async function api(path, { method = "GET", body } = {}) {
  if (refused) throw new RefusedError("token refused");
  const headers = { Accept: "application/json" };
  const secret = token.get();
  if (secret) headers.Authorization = `Bearer ${secret}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
  } catch (exc) {
    throw new UnreachableError(String(exc));
  }
  if (response.status === 401) {
    refuse();
    throw new RefusedError("token refused");
  }
  let data = null;
  if (response.status !== 204) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (!response.ok) throw new HttpError(response.status, data);
  return data;
}
