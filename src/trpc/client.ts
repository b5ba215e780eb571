/**
 * The dashboard's tRPC client: the same procedures as the server, typed end to end.
 * https://trpc.io/docs/client/vanilla
 */
import { TRPCClientError, createTRPCClient, httpBatchLink } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/src/server/api/root";
import { pageAccountHeaders } from "./page-account";

/** What each procedure answers, for the components' props. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** What each procedure takes. */
export type RouterInputs = inferRouterInputs<AppRouter>;

export const api = createTRPCClient<AppRouter>({
  // The server refuses batches of more than 10 calls.
  links: [httpBatchLink({ url: "/api/trpc", maxItems: 10, headers: pageAccountHeaders })],
});

/** The service's own message for a failed call, or a general one for network trouble. */
export function errorMessage(error: unknown): string {
  // A server answer carries `data`; a network failure does not.
  if (error instanceof TRPCClientError && error.data && error.message) return error.message;
  return "网络异常，请检查连接后重试";
}

export { isUnauthorized } from "@/src/client";
