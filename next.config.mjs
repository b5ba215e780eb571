/**
 * The browser hardening of every answer (docs/design.md 16): framing and sniffing refused, no
 * Referer sent elsewhere. Pages add their nonce-based Content-Security-Policy in proxy.ts.
 */
const COMMON_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

/** API answers are JSON, never documents: nothing may load or frame them. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** @param {Record<string, string>} headers */
const asList = (headers) => Object.entries(headers).map(([key, value]) => ({ key, value }));

/** @type {import("next").NextConfig} */
const nextConfig = {
  // Native and WASM-backed database drivers are loaded by Node at run time, not bundled.
  // pdfkit reads its font metrics from its own folder at run time.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg", "pdfkit"],
  poweredByHeader: false,
  reactStrictMode: true,
  typedRoutes: false,
  // Paths are answered as spelled: the gateways' own `token/` (proxied as /api/site/token/) is not
  // redirected to `token`, which names no route of theirs.
  skipTrailingSlashRedirect: true,
  headers: () =>
    Promise.resolve([
      { source: "/:path*", headers: asList(COMMON_HEADERS) },
      { source: "/api/:path*", headers: asList({ "Content-Security-Policy": API_CSP }) },
    ]),
  // Browsers ask for /favicon.ico on their own (before the page's <link rel="icon"> is read): the icon, not a 404.
  rewrites: () => Promise.resolve([{ source: "/favicon.ico", destination: "/icon.svg" }]),
};

export default nextConfig;
