/** A whole stream's bytes (a statement read back). */
export async function streamBytes(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/** A session made over HTTP: the token from the body and the cookie as a browser would send it back. */
export type HttpSession = { token: string; cookie: string };

export type HttpAnswer = { status: number; headers: Headers; body: Record<string, unknown> };

/** A request to a running server, its JSON answer read back. A string body is sent as is. */
export async function request(
  baseUrl: string,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const { method = init.body === undefined ? "GET" : "POST", body, headers = {} } = init;
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Signs in at a running server's REST route; throws with the service's message if it refuses. */
export async function signInOverHttp(baseUrl: string, body: unknown): Promise<HttpSession> {
  const res = await request(baseUrl, "/api/auth/login", { body });
  const data = res.body.data as { sessionToken?: string } | undefined;
  if (!res.body.success || !data?.sessionToken)
    throw new Error(`login failed (HTTP ${res.status}): ${String(res.body.message)}`);
  return { token: data.sessionToken, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
}

/** Sign-in budgets are per clock minute: start a counting test well inside one, never across two. */
export async function freshRateWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await new Promise((r) => setTimeout(r, left + 50));
}

let workspaces = 0;

/**
 * A new workspace made over HTTP, from an address of its own (the server must trust 127.0.0.1 as
 * a proxy: three creations an hour per address); its device token.
 */
/** The password of every workspace workspaceOverHttp makes. */
export const WORKSPACE_PASSWORD = "correct horse battery";

export async function workspaceOverHttp(baseUrl: string, name: string): Promise<string> {
  const n = ++workspaces;
  const res = await request(baseUrl, "/api/workspace/register", {
    body: { name, password: WORKSPACE_PASSWORD },
    headers: { "x-forwarded-for": `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}` },
  });
  const data = res.body.data as { token?: string } | undefined;
  if (!data?.token) throw new Error(`register failed (HTTP ${res.status}): ${String(res.body.message)}`);
  return data.token;
}

/** A workspace API token made over HTTP: read, write or sync (with workspaceOverHttp's password). */
export async function apiTokenOverHttp(baseUrl: string, workspaceToken: string, access: string): Promise<string> {
  const res = await request(baseUrl, "/api/workspace/tokens", {
    body: {
      name: `${access} ${Math.random().toString(36).slice(2, 8)}`,
      access,
      ...(access === "sync" ? { password: WORKSPACE_PASSWORD } : {}),
    },
    headers: { authorization: `Bearer ${workspaceToken}` },
  });
  const data = res.body.data as { token?: string } | undefined;
  if (!data?.token) throw new Error(`token failed (HTTP ${res.status}): ${String(res.body.message)}`);
  return data.token;
}
