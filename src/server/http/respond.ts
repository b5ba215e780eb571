import { MSG, failure } from "../core/messages";

export function json(body: unknown, status: number, headers = new Headers()): Response {
  headers.set("Content-Type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers });
}

export function tooLarge(): Response {
  return json(failure(MSG.bodyTooLarge), 413);
}

/** Too many files read at once: a moment later (net/body.ts). */
export function bodiesBusy(): Response {
  return json(failure(MSG.bodiesBusy), 503, new Headers({ "Retry-After": "5" }));
}
