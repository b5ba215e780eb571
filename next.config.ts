import type { NextConfig } from "next";
import { API_CSP, COMMON_HEADERS } from "./src/server/http/security-headers";

const asList = (headers: Record<string, string>) => Object.entries(headers).map(([key, value]) => ({ key, value }));

const nextConfig: NextConfig = {
  // Native and WASM-backed database drivers are loaded by Node at run time, not bundled.
  // pdfkit reads its font metrics from its own folder at run time.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg", "pdfkit"],
  poweredByHeader: false,
  reactStrictMode: true,
  typedRoutes: false,
  // Paths are answered as spelled: the gateways' own `token/` (proxied as /api/site/token/) is not
  // redirected to `token`, which names no route of theirs.
  skipTrailingSlashRedirect: true,
  // Pages add their nonce-based CSP in proxy.ts; API answers get one that allows nothing.
  headers: () =>
    Promise.resolve([
      { source: "/:path*", headers: asList(COMMON_HEADERS) },
      { source: "/api/:path*", headers: asList({ "Content-Security-Policy": API_CSP }) },
    ]),
  // Browsers ask for /favicon.ico on their own (before the page's <link rel="icon"> is read): the icon, not a 404.
  rewrites: () => Promise.resolve([{ source: "/favicon.ico", destination: "/icon.svg" }]),
};

export default nextConfig;
