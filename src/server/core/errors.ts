import { failure, type Failure } from "./messages";

/**
 * A refusal the caller is told about: domain code throws one, and the API's one error map
 * (api/trpc.ts) answers it. Without a code it is an outcome of the operation, answered in words
 * as `{success:false, message, ...fields}` (HTTP 200 on REST, docs/api.md); with one, the request
 * itself is refused with that code's status (401, 403, 429 …) and the same body. The codes are
 * tRPC's names.
 */
export type RefusalCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "PRECONDITION_FAILED"
  | "TOO_MANY_REQUESTS"
  | "SERVICE_UNAVAILABLE";

const REFUSAL = brand("Refusal");

export class Refusal extends Error {
  /**
   * `instanceof Refusal` holds for one made by another copy of this module too (see `brand`);
   * a subclass is checked as usual.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return this === Refusal ? REFUSAL.is(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }

  constructor(
    message: string,
    readonly code?: RefusalCode,
    /** Sent as `Retry-After` when set. */
    readonly retryAfterSeconds?: number,
    /** Said beside the message in a refusal answered in words (a question to confirm, what was found). */
    readonly fields?: Record<string, unknown>,
  ) {
    super(message);
    REFUSAL.mark(this);
  }
}

/**
 * The answer of a piece of work whose code-less refusal is one outcome among others to its caller
 * (a live read that falls back to the ledger, one account's check-in among many): the refusal as
 * `{success:false, message, ...fields}` instead of thrown. Anything else is thrown as it was.
 */
export async function answered<T extends { success: boolean }>(work: Promise<T>): Promise<T | Failure> {
  try {
    return await work;
  } catch (error) {
    const words = refusalAnswer(error);
    if (words) return words;
    throw error;
  }
}

/** A code-less refusal as its answer in words, `{success:false, message, ...fields}`; else null. */
export function refusalAnswer(error: unknown): (Failure & Record<string, unknown>) | null {
  return error instanceof Refusal && error.code === undefined ? { ...failure(error.message), ...error.fields } : null;
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
