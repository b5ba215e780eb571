/**
 * A refusal the caller is told about: domain code throws one, and the API's one error map
 * (api/trpc.ts) turns it into the answer's code and message. The codes are tRPC's names.
 */
export type RefusalCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "PRECONDITION_FAILED"
  | "TOO_MANY_REQUESTS"
  | "SERVICE_UNAVAILABLE";

export class Refusal extends Error {
  constructor(
    message: string,
    readonly code: RefusalCode,
    /** Sent as `Retry-After` when set. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
