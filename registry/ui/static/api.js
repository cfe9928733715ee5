// The registry's REST API, called with the user's credentials (kept in sessionStorage only).
// API URLs are relative to the page (/ui/ -> ../subjects), so the UI works behind a path prefix.

const KEY = "schema-registry-ui-auth";
const CT = "application/vnd.schemaregistry.v1+json";

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error_code;
    this.body = body;
  }
}

export function credentials() {
  try { return JSON.parse(sessionStorage.getItem(KEY)) || null; } catch { return null; }
}

export function setCredentials(value) {
  if (value) sessionStorage.setItem(KEY, JSON.stringify(value));
  else sessionStorage.removeItem(KEY);
}

function authorization() {
  const c = credentials();
  if (!c) return null;
  if (c.token) return "Bearer " + c.token;
  const bytes = new TextEncoder().encode(`${c.user}:${c.password}`);
  return "Basic " + btoa(String.fromCharCode(...bytes));
}

export const enc = (s) => encodeURIComponent(s);

export async function api(path, { method = "GET", body, query } = {}) {
  let url = "../" + path.replace(/^\//, "");
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== false) q.set(k, v);
    const s = q.toString();
    if (s) url += (url.includes("?") ? "&" : "?") + s;
  }
  // as Confluent's clients: with this header the registry adds the 8.0 fields (guid, ts)
  const headers = { Accept: CT, "Confluent-Accept-Unknown-Properties": "true" };
  const auth = authorization();
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers["Content-Type"] = CT;
  // credentials "omit": the browser never shows its own Basic prompt; the UI asks instead
  const res = await fetch(url, {
    method, headers, credentials: "omit",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) throw new ApiError(res.status, typeof data === "object" ? data : { message: text });
  return data;
}

// GET that answers `fallback` on 404 (a missing subject config, mode, ...)
export async function maybe(path, opts, fallback = null) {
  try { return await api(path, opts); } catch (e) { if (e.status === 404) return fallback; throw e; }
}

// run `fn` over `items`, at most `width` at a time
export async function pool(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) { const i = next++; out[i] = await fn(items[i], i); }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}
