/**
 * A typed client for Node programs: sign in, read the session, sign out, manage sessions.
 * It speaks tRPC to `<baseUrl>/api/trpc` and carries the session token as a Bearer header.
 *
 *   const client = createDashboardClient({ baseUrl: "http://127.0.0.1:3000" });
 *   const result = await client.login({ userId: 1, accessToken: "…", siteId: 1 });
 *   if (result.success) console.log((await client.me()).data.userInfo);
 */
import { TRPCClientError, createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "../server/api/root";
import type { LoginInput } from "../server/auth/login-input";

export type { LoginInput };

export type DashboardClientOptions = {
  /** Where the service runs, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** A session token from an earlier login, to resume that session. */
  sessionToken?: string;
};

export function createDashboardClient(options: DashboardClientOptions) {
  let token = options.sessionToken;
  const trpc = createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${options.baseUrl.replace(/\/+$/, "")}/api/trpc`,
        headers: () => (token ? { authorization: `Bearer ${token}` } : {}),
      }),
    ],
  });

  return {
    /** The current session token, if signed in. */
    get sessionToken(): string | undefined {
      return token;
    },
    /** Registered sites (id, name, url). */
    sites: () => trpc.site.list.query(),
    /** Signs in; on success the client keeps the token. Failures resolve with `{ success: false, message }`. */
    async login(input: LoginInput) {
      const result = await trpc.auth.login.mutate(input);
      if (result.success) token = result.data.sessionToken;
      return result;
    },
    /** The session's user info snapshot and current site. Rejects with UNAUTHORIZED without a live session. */
    me: () => trpc.auth.me.query(),
    /** Ends the session and forgets the token. */
    async logout() {
      const result = await trpc.auth.logout.mutate();
      token = undefined;
      return result;
    },
    sessions: {
      list: () => trpc.session.list.query(),
      revoke: (id: string) => trpc.session.revoke.mutate({ id }),
      revokeOthers: () => trpc.session.revokeOthers.mutate(),
    },
  };
}

export type DashboardClient = ReturnType<typeof createDashboardClient>;

/** True when a call was refused for want of a live session (HTTP 401). */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { code?: string } | undefined)?.code === "UNAUTHORIZED";
}

export { TRPCClientError };
