"use client";

/**
 * The dashboard's data fetching: tRPC procedures as TanStack Query hooks (loading, error, cache,
 * refetch). https://trpc.io/docs/client/react
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { httpBatchLink, httpBatchStreamLink, splitLink } from "@trpc/client";
import { createTRPCReact } from "@trpc/react-query";
import { useState } from "react";
import type { AppRouter } from "@/src/server/api/root";
import { PageAccount, pageAccountHeaders, setPageAccount } from "./page-account";

export const trpc = createTRPCReact<AppRouter>();

/**
 * `account`: the key of the account the page shows; every call names it. The provider is keyed by
 * it where it is used, so another account's page starts with an empty cache.
 */
export function QueryProvider({ children, account = null }: { children: React.ReactNode; account?: string | null }) {
  setPageAccount(account);
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          // The server caches site answers for 15–30 s; asking again sooner only costs a round trip.
          queries: { staleTime: 15_000, retry: false, refetchOnWindowFocus: false },
        },
      }),
  );
  const [client] = useState(() =>
    trpc.createClient({
      links: [
        splitLink({
          // The overview's rows stream in as each site answers; every other call (some set the
          // cookie, which a streamed answer cannot) is an ordinary batch.
          condition: (op) => op.path === "account.overviewRow",
          true: httpBatchStreamLink({ url: "/api/trpc", maxItems: 10, headers: pageAccountHeaders }),
          false: httpBatchLink({ url: "/api/trpc", maxItems: 10, headers: pageAccountHeaders }),
        }),
      ],
    }),
  );
  return (
    <trpc.Provider client={client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>
        <PageAccount.Provider value={account}>{children}</PageAccount.Provider>
      </QueryClientProvider>
    </trpc.Provider>
  );
}
