/**
 * The pages' Content-Security-Policy of docs/design.md 16 (nonce-based: Next puts the nonce on its own
 * scripts when it finds it in the request's CSP header) and HSTS. The headers of every answer
 * (framing, sniffing, Referer) are in next.config.mjs.
 */
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
