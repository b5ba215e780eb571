/** A session made over HTTP: the token from the body and the cookie as a browser would send it back. */
export type HttpSession = { token: string; cookie: string };

/** Signs in at a running server's REST route; throws with the service's message if it refuses. */
export async function signInOverHttp(baseUrl: string, body: unknown): Promise<HttpSession> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { success: boolean; message?: string; data?: { sessionToken: string } };
  if (!answer.success || !answer.data) throw new Error(`login failed (HTTP ${res.status}): ${answer.message}`);
  return { token: answer.data.sessionToken, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
}

/** Sign-in budgets are per clock minute: start a counting test well inside one, never across two. */
export async function freshRateWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await new Promise((r) => setTimeout(r, left + 50));
}
