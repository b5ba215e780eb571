import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** What follows /api/site/ as the request spelled it (the router checks it), and the query string. */
function target(req: Request) {
  const url = new URL(req.url);
  return { path: url.pathname.replace(/^\/api\/site\//, ""), query: url.search.replace(/^\?/, "") };
}

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.actions.proxyRead({ method: "GET", ...target(req) }));
}

const write = (method: "POST" | "PUT") => (req: Request) =>
  restCall(req, (caller, body) => caller.actions.proxyWrite({ method, ...target(req), body }), {
    readBody: true,
    maxBody: 64 * 1024,
  });

export const POST = write("POST");
export const PUT = write("PUT");

export function DELETE(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.actions.proxyWrite({ method: "DELETE", ...target(req) }));
}
