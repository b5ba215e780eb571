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

export const trpc = createTRPCReact<AppRouter>();

export function QueryProvider({ children }: { children: React.ReactNode }) {
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
          true: httpBatchStreamLink({ url: "/api/trpc", maxItems: 10 }),
          false: httpBatchLink({ url: "/api/trpc", maxItems: 10 }),
        }),
      ],
    }),
  );
  return (
    <trpc.Provider client={client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </trpc.Provider>
  );
}
