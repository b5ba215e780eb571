/**
 * Whether a browser sent this request from another site: an `Origin` naming another origin (or
 * `null`, what sandboxed frames and some redirects send), or `Sec-Fetch-Site: cross-site`.
 * Requests without either header (curl, servers) are not browser requests and are not judged.
 */
export function isForeignRequest(headers: Headers, ownOrigin: string): boolean {
  const origin = headers.get("origin");
  if (origin !== null && origin !== ownOrigin) return true;
  return headers.get("sec-fetch-site") === "cross-site";
}
