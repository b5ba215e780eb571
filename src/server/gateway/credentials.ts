/**
 * What of a site's answers is a credential (docs/design.md 24): the fields never kept nor passed
 * on, an answer cleaned of them before it passes through to a client, and a key as lists show it.
 */
/**
 * Fields of a site's answers that are credentials (older gateways put the access token, an empty
 * password and the verification code in `GET /api/user/self`): never kept, never passed on.
 */
export const CREDENTIAL_FIELDS = new Set([
  "access_token",
  "accessToken",
  "password",
  "original_password",
  "verification_code",
  "webhook_secret",
]);

/** Levels of a passed-through answer cleaned; deeper ones are dropped (no family nests this far). */
const CLEAN_DEPTH = 12;

/**
 * A site's answer as it may pass through to a client (docs/design.md 24): credential fields dropped at
 * every depth, the access token masked wherever a string carries it, and with `keys` every API
 * key (`key` of a token row) masked, as the token list shows it; a reveal is its own recorded call.
 */
export function withoutCredentials<T>(value: T, accessToken: string, { keys }: { keys: boolean }): T {
  const secret = accessToken.trim();
  const clean = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return secret.length >= 8 && v.includes(secret) ? v.split(secret).join("***") : v;
    if (v === null || typeof v !== "object") return v;
    if (depth >= CLEAN_DEPTH) return undefined;
    if (Array.isArray(v)) return v.map((x) => clean(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (CREDENTIAL_FIELDS.has(k)) continue;
      out[k] = keys && k === "key" && typeof x === "string" ? maskKey(x) : clean(x, depth + 1);
    }
    return out;
  };
  return clean(value, 0) as T;
}

/** First 4 + `****` + last 4, from a full key or one the site already masked; short keys hide whole. */
export function maskKey(key: string): string {
  const k = key.trim();
  if (k.length <= 12) return "****";
  return `${k.slice(0, 4)}****${k.slice(-4)}`;
}
