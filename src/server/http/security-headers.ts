/**
 * The browser hardening of design.md 16. Pages get a nonce-based Content-Security-Policy (Next
 * puts the nonce on its own scripts when it finds it in the request's CSP header); every answer
 * refuses framing and sniffing and sends no Referer elsewhere.
 */
export const COMMON_HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

/** API answers are JSON, never documents: nothing may load or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

export function pagePolicy(nonce: string, { secure, dev }: { secure: boolean; dev: boolean }): string {
  return [
    "default-src 'self'",
    // React in development reconstructs server stacks with eval; production never does.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${dev ? " ws:" : ""}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(secure ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** Two years, the preload list's minimum; only ever sent over HTTPS. */
export const HSTS = "max-age=63072000; includeSubDomains";
