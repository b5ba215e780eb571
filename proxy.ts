/**
 * Runs before every page (not the API routes, not static files): a fresh CSP nonce per request,
 * and HSTS over HTTPS. https://nextjs.org/docs/app/guides/content-security-policy
 */
import { NextResponse, type NextRequest } from "next/server";
import { HSTS, pagePolicy } from "@/src/server/http/security-headers";

export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const proto =
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() ?? request.nextUrl.protocol.replace(":", "");
  const secure = proto === "https";
  const policy = pagePolicy(nonce, { secure, dev: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", policy);
  if (secure) response.headers.set("Strict-Transport-Security", HSTS);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!api/|_next/static|_next/image).*)" }],
};
