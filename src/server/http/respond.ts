import { MSG, failure } from "../core/messages";

export function json(body: unknown, status: number, headers = new Headers()): Response {
  headers.set("Content-Type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers });
}

export function tooLarge(): Response {
  return json(failure(MSG.bodyTooLarge), 413);
}
