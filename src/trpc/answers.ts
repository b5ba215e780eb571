/**
 * What the dashboard's calls answer: the procedures' outputs and inputs as types for the
 * components' props, and a failed call in words. The calls themselves are the hooks of
 * src/trpc/react.tsx; Node programs use the typed client of src/client.
 */
import { TRPCClientError } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/src/server/api/root";

/** What each procedure answers, for the components' props. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** What each procedure takes. */
export type RouterInputs = inferRouterInputs<AppRouter>;

/** A refusal the service answered in words (`success: false`), thrown by `checked`. */
class Refused extends Error {}

/** An answer that may be a refusal in words, as a success; the refusal thrown with its message. */
export function checked<T extends { success: true }>(answer: T | { success: false; message: string }): T {
  if (!answer.success) throw new Refused(answer.message);
  return answer;
}

/** The data of an answer that may be a refusal in words. */
export const dataOf = <T>(answer: { success: true; data: T } | { success: false; message: string }): T =>
  checked(answer).data;

/** A refusal the service answered outside tRPC (a REST download's JSON failure), to throw. */
export const refused = (message: string): Error => new Refused(message);

/**
 * What the service said of a failed call: a refusal in words, a tRPC error, or an answer outside
 * tRPC's envelope (the 413 of a body refused before tRPC read it: its `message`, else its status);
 * "网络异常" only when nothing answered.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Refused) return error.message;
  if (error instanceof TRPCClientError) {
    // A server answer carries `data`; a network failure does not.
    if (error.data && error.message) return error.message;
    const meta = error.meta as { response?: { status?: number }; responseJSON?: unknown } | undefined;
    const said = meta?.responseJSON as { message?: unknown } | undefined;
    if (said && typeof said.message === "string" && said.message) return said.message;
    const status = meta?.response?.status;
    if (typeof status === "number" && status > 0) return `服务器未能处理请求（HTTP ${status}），请稍后再试`;
  }
  return "网络异常，请检查连接后重试";
}

export { isUnauthorized } from "@/src/client";
