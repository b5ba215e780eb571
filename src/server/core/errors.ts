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

/** A secret the caller gave (a password, a second-factor code) was wrong: a guess, counted where guesses are limited. */
export class WrongSecret extends Refusal {}

/**
 * `instanceof` for an error class whose instances may be made by another copy of its module. The
 * server's bundles (the route handlers, the jobs, the server entry) each hold a copy, and one
 * process state serves them all: a site's gate started by one copy fails the waiters of another,
 * a read shared through the live-data state rejects every caller with one copy's error. Instances
 * carry a process-wide brand, and the class checks it.
 */
export function brand(name: string) {
  const key = Symbol.for(`gateway-dashboard.error.${name}`);
  return {
    mark(error: Error): void {
      Object.defineProperty(error, key, { value: true });
    },
    is(value: unknown): boolean {
      return typeof value === "object" && value !== null && key in value;
    },
  };
}
