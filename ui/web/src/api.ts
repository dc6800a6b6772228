// The REST client: every call goes to the same origin's /api/v1 with the caller's
// bearer token in the Authorization header (never in a URL), so the app sees exactly
// what the token's caller may see.
import { lang } from "./i18n";

const tokenKey = "vigia.token";

export class APIError extends Error {
  constructor(
    public status: number,
    public code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export function token(): string {
  return sessionStorage.getItem(tokenKey) || "";
}

export function setToken(tok: string): void {
  if (tok) sessionStorage.setItem(tokenKey, tok);
  else sessionStorage.removeItem(tokenKey);
}

// A bearer token holds only RFC 6750 b64token characters; anything else would make
// an invalid header, so it is refused rather than sent.
export function validToken(tok: string): boolean {
  return /^[A-Za-z0-9\-._~+/]+=*$/.test(tok);
}

let base = "/api/v1";
export function setBase(b: string): void {
  base = b;
}

export interface Listed<T> {
  items: T[];
  total: number;
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json", "Accept-Language": lang() };
  const tok = token();
  if (tok) headers.Authorization = "Bearer " + tok;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  if (!res.ok) {
    let code = "http_" + res.status;
    let detail = res.statusText;
    try {
      const e = await res.json();
      code = e.code || code;
      if (typeof e.detail === "string") detail = e.detail;
    } catch {
      /* not JSON: keep the status */
    }
    throw new APIError(res.status, code, detail);
  }
  return res;
}

export async function get<T>(path: string): Promise<T> {
  return (await call("GET", path)).json();
}

export async function list<T>(path: string): Promise<Listed<T>> {
  const res = await call("GET", path);
  const items = (await res.json()) as T[];
  const total = Number(res.headers.get("X-Total-Count") || items.length);
  return { items, total };
}

export async function post<T>(path: string, body: unknown): Promise<T> {
  return (await call("POST", path, body)).json();
}

export function q(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? "?" + s : "";
}
