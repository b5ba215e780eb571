/**
 * The request a piece of work is done for: its id, carried through every await of the request
 * (AsyncLocalStorage) into the log lines it causes, site calls included, and answered as
 * `X-Request-Id`. Kept on globalThis so that the server entry and the route handlers share it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";

type RequestContext = { id: string };

const holder = globalThis as unknown as { gdRequests?: AsyncLocalStorage<RequestContext> };
const storage = () => (holder.gdRequests ??= new AsyncLocalStorage<RequestContext>());

/** A request id the client or a proxy sent, when it is a plain short token; else a new one. */
export function requestIdOf(sent: string | string[] | undefined): string {
  const value = Array.isArray(sent) ? sent[0] : sent;
  // Not a UUID: the log scan takes those for session tokens, and an id is no secret.
  return value && /^[\w.:-]{1,64}$/.test(value) ? value : randomBytes(9).toString("base64url");
}

export function withRequest<T>(id: string, run: () => T): T {
  return storage().run({ id }, run);
}

/** The id of the request this code runs for; undefined in background work. */
export function currentRequestId(): string | undefined {
  return storage().getStore()?.id;
}
