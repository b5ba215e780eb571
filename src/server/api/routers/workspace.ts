import { checkinShown } from "../../workspace/scope";
import { checkinFamily } from "../../gateway/writes";
import type { Family } from "../../gateway/families";
import { endAccountAlerts } from "../../alerts/history";
import { hubStore } from "../../hub/store";
import { alertRules } from "../../alerts/rules";
import { z } from "zod";
import { doneSchema, failureSchema, orFailure, successOf } from "../../core/messages";
import { deleteAccountLedger } from "../../ledger/sites";
import { syncStates } from "../../ledger/sync-status";
import { workspaceCookie } from "../../workspace/cookie";
import { siteIndex, type SavedAccount, type SiteIndex } from "../../workspace/saved-accounts";
import {
  importResultSchema,
  removedSchema,
  workspaceAccountSuccessSchema,
  workspaceAccountsSchema,
  workspaceBrowserSignedInSchema,
  workspaceMeSchema,
  workspaceSignedInSchema,
} from "../../workspace/schemas";
import { signup } from "../../workspace/signup";
import { apiAccessOf, workspaceStore } from "../../workspace/workspaces";
import { logEvent } from "../../core/log";
import { exportCsv, exportRows, importAccounts, parseBackup } from "../../workspace/transfer";
import { fileSuccess, type FileData } from "../schemas/accounts";
import { choice } from "../schemas/params";
import { startLedgerSync } from "../site-deps";
import {
  accountIdInput,
  addAccountInput,
  registerInput,
  removeAccountInput,
  updateAccountInput,
  workspaceLoginInput,
} from "../schemas/workspace";
import { publicProcedure, router, savedAccountsOf, signInProcedure, workspaceProcedure, sentOnce } from "../trpc";
import { inWords, login, register, signedIn } from "../workspace-access";
import { rest } from "../rest-routes";
import { IMPORT_MAX_BYTES } from "../../net/body";

/** Whether its site's family has a check-in (a site not probed yet may have one). */
const checkinOffered = (family: Family | undefined) => family !== undefined && checkinFamily(family) !== null;

/** The account as the workspace's REST answers show it. */
function shown(account: SavedAccount, sites: SiteIndex) {
  return {
    id: account.id,
    siteId: account.siteId,
    siteName: sites.get(account.siteId)?.name ?? null,
    userId: account.siteUserId,
    username: account.username,
    displayName: account.displayName,
    alias: account.alias,
    tags: account.tags,
    pinned: account.pinned,
    excluded: account.excluded,
    order: account.order,
    state: account.state,
    stateMessage: account.stateMessage,
    createdAt: account.createdAt.toISOString(),
    autoCheckin: account.autoCheckin,
    checkinOffered: checkinOffered(sites.get(account.siteId)?.family),
    checkin: checkinShown(account.checkin),
  };
}

/**
 * Workspaces (docs/design.md 17): create one, sign in from any device, keep accounts in it. REST
 * /api/workspace/* wraps these; with a workspace session every account route reads its accounts.
 */
export const workspaceRouter = router({
  /** REST: creates a workspace and answers its session token (browsers also get the cookie). */
  register: signInProcedure
    .meta(rest("POST", "/api/workspace/register"))
    .input(registerInput)
    .output(workspaceSignedInSchema)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await register(ctx, input))),

  /** REST: signs in; the token is the Bearer for every account route. */
  login: signInProcedure
    .meta(rest("POST", "/api/workspace/login"))
    .input(workspaceLoginInput)
    .output(workspaceSignedInSchema)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await login(ctx, input))),

  /** The dashboard's creation: the same, answered without the token (the cookie carries it). */
  create: signInProcedure
    .input(registerInput)
    .output(orFailure(workspaceBrowserSignedInSchema))
    .mutation(({ ctx, input }) => inWords(async () => signedIn(ctx, await register(ctx, input)).data.workspace)),

  /** The dashboard's sign-in, answered without the token. */
  signIn: signInProcedure
    .input(workspaceLoginInput)
    .output(orFailure(workspaceBrowserSignedInSchema))
    .mutation(({ ctx, input }) => inWords(async () => signedIn(ctx, await login(ctx, input)).data.workspace)),

  /** Whether anyone may create a workspace here, or only with an invite code (asked before signing in). */
  signupMode: publicProcedure
    .output(z.object({ mode: z.enum(["open", "invite"]) }))
    .query(async ({ ctx }) => ({ mode: await signup(ctx.db).mode() })),

  /** Ends this device's session (an API token is revoked with revokeApiToken). */
  logout: workspaceProcedure
    .meta(rest("POST", "/api/workspace/logout", { input: "none" }))
    .output(doneSchema)
    .mutation(async ({ ctx }) => {
      if (ctx.workspace.kind === "device") await workspaceStore(ctx.db).end(ctx.workspace.id);
      if (ctx.workspaceVia === "cookie") workspaceCookie.clear(ctx.resHeaders, ctx.secure);
      return { success: true as const };
    }),

  me: workspaceProcedure
    .meta(rest("GET", "/api/workspace/me"))
    .output(workspaceMeSchema)
    .query(async ({ ctx }) => {
      const [accounts, { timeZone }] = await Promise.all([
        savedAccountsOf(ctx).list(ctx.workspace.workspaceId),
        alertRules(ctx.db).settings(ctx.workspace.workspaceId),
      ]);
      const { kind } = ctx.workspace;
      return {
        success: true as const,
        data: {
          workspace: { id: ctx.workspace.workspaceId, name: ctx.workspace.workspaceName, timeZone },
          access: kind === "device" ? ("device" as const) : apiAccessOf(kind),
          accounts: accounts.length,
        },
      };
    }),

  /** The workspace's accounts, pinned first, then in the person's order; never a token. */
  accounts: workspaceProcedure
    .meta(rest("GET", "/api/workspace/accounts"))
    .output(workspaceAccountsSchema)
    .query(async ({ ctx }) => {
      const sites = await siteIndex(ctx.db);
      const accounts = await savedAccountsOf(ctx).list(ctx.workspace.workspaceId, sites);
      const states = await syncStates(ctx.db, accounts);
      const withSync = accounts.map((a) => {
        const state = states.get(`${a.siteId}:${a.siteUserId}`);
        const sync = {
          at: state?.syncedAt?.toISOString() ?? null,
          running: state?.running ?? false,
          error: state?.lastError ?? null,
        };
        return { ...shown(a, sites), sync };
      });
      return { success: true as const, data: { accounts: withSync } };
    }),

  /**
   * Saves an account once its site accepted the token (the site's refusal is the answer); an
   * account the workspace holds already gets the new token (re-authorisation), the rest kept.
   */
  addAccount: workspaceProcedure
    .meta(rest("POST", "/api/workspace/accounts"))
    .use(sentOnce)
    .input(addAccountInput)
    .output(orFailure(workspaceAccountSuccessSchema))
    .mutation(async ({ ctx, input }) => {
      const accounts = savedAccountsOf(ctx);
      // Saving one the workspace holds changes nothing: re-authorisation is its own step.
      const outcome = await accounts.add(ctx.workspace.workspaceId, input, new Date(), "refuse");
      if (!outcome.ok) return { success: false as const, message: outcome.message };
      // The account's ledger catches up in the background, as at sign-in (docs/design.md 13).
      if (ctx.ledgerSyncMinutes > 0) {
        const session = await accounts.sessionOf(outcome.account);
        if (session) startLedgerSync(ctx, session);
      }
      return { success: true as const, data: { account: shown(outcome.account, await siteIndex(ctx.db)) } };
    }),

  /** Changes alias, tags, pinned, left out of totals, order; a new `accessToken` re-authorises. */
  updateAccount: workspaceProcedure
    .meta(rest("PATCH", "/api/workspace/accounts/{id}"))
    .input(updateAccountInput)
    .output(z.union([workspaceAccountSuccessSchema, failureSchema]))
    .mutation(async ({ ctx, input }) => {
      const accounts = savedAccountsOf(ctx);
      const { id, accessToken, ...change } = input;
      if (accessToken !== undefined) {
        const current = await accounts.get(ctx.workspace.workspaceId, id);
        const outcome = await accounts.add(ctx.workspace.workspaceId, {
          siteId: current.siteId,
          userId: current.userId,
          accessToken,
        });
        if (!outcome.ok) return { success: false as const, message: outcome.message };
      }
      const sites = await siteIndex(ctx.db);
      if (change.autoCheckin === true) {
        // Offered only where the site's family has a check-in: else the row waits for one that never comes.
        const site = sites.get((await accounts.get(ctx.workspace.workspaceId, id)).siteId);
        if (site && !checkinOffered(site.family))
          return {
            success: false as const,
            message: `「${site.name}」是 ${site.family} 站点，没有签到功能，不能开启自动签到`,
          };
      }
      const account = await accounts.update(ctx.workspace.workspaceId, id, change);
      return { success: true as const, data: { account: shown(account, sites) } };
    }),

  /** Removes an account and its sealed token; its ledger too when asked (and no other workspace keeps it). */
  removeAccount: workspaceProcedure
    .meta(rest("DELETE", "/api/workspace/accounts/{id}"))
    .input(removeAccountInput)
    .output(removedSchema)
    .mutation(async ({ ctx, input }) => {
      const accounts = savedAccountsOf(ctx);
      const removed = await accounts.remove(ctx.workspace.workspaceId, input.id);
      // The All API Hub extension is told at its next sync (a deletion record of this time).
      await hubStore(ctx.db).accountRemoved(ctx.workspace.workspaceId, input.id, new Date());
      // Its open alerts end with it (no message: nothing is watched any more).
      await endAccountAlerts(ctx.db, ctx.workspace.workspaceId, input.id);
      if (!input.ledger) return { success: true as const, data: { ledgerDeleted: false, entries: 0, note: null } };
      // Kept history is deleted only by a holder the site accepts now (docs/design.md 24).
      if (removed.state !== "ok") {
        const note = "本工作区已不再持有该账户（保存的令牌已失效），账本已保留";
        return { success: true as const, data: { ledgerDeleted: false, entries: 0, note } };
      }
      if (await accounts.savedElsewhere(ctx.workspace.workspaceId, removed.siteId, removed.siteUserId)) {
        const note = "该账户的账本仍被其他工作区使用，已保留";
        return { success: true as const, data: { ledgerDeleted: false, entries: 0, note } };
      }
      const entries = await deleteAccountLedger(ctx.db, removed);
      return { success: true as const, data: { ledgerDeleted: true, entries, note: null } };
    }),

  /**
   * Imports the accounts of an All API Hub or metapi backup file: each matched to a registered
   * site, verified with it, saved with its alias and tags; every account of the file is in the
   * answer with what became of it (never its token).
   */
  importAccounts: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/import", {
        maxBody: IMPORT_MAX_BYTES,
        shape: ({ body }) => ({ file: body }),
        auth: "workspace",
      }),
    )
    .input(z.object({ file: z.unknown().describe("备份文件的 JSON 内容") }))
    .output(successOf(importResultSchema))
    .mutation(async ({ ctx, input }) => {
      const { format, candidates } = parseBackup(input.file);
      const outcomes = await importAccounts(ctx.db, savedAccountsOf(ctx), ctx.workspace.workspaceId, candidates, {
        timeoutMs: ctx.timeoutMs,
        perMinute: ctx.siteRequestsPerMinute,
      });
      const count = (result: string) => outcomes.filter((o) => o.result === result).length;
      logEvent("workspace.import", {
        workspace: ctx.workspace.workspaceId,
        format,
        accounts: outcomes.length,
        saved: count("saved"),
        updated: count("updated"),
      });
      return { success: true as const, data: { format, outcomes } };
    }),

  /** The account list without tokens, as JSON or CSV (a download over REST). */
  exportAccounts: workspaceProcedure
    .meta(rest("GET", "/api/workspace/accounts/export", { answer: "file" }))
    .input(z.object({ format: choice(["json", "csv"], "json") }).prefault({}))
    .output(fileSuccess)
    .query(async ({ ctx, input }) => {
      const sites = await siteIndex(ctx.db);
      const list = await savedAccountsOf(ctx).list(ctx.workspace.workspaceId, sites);
      const rows = exportRows(list, sites);
      const day = new Date().toISOString().slice(0, 10);
      const body =
        input.format === "csv"
          ? exportCsv(rows)
          : JSON.stringify(
              { workspace: ctx.workspace.workspaceName, exportedAt: new Date().toISOString(), accounts: rows },
              null,
              2,
            );
      const data: FileData = {
        filename: `accounts_${day}.${input.format}`,
        contentType: input.format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
        body: new TextEncoder().encode(body),
      };
      return { success: true as const, data };
    }),

  /** Makes an account the one this device shows (the dashboard's account switcher). */
  switchAccount: workspaceProcedure
    .input(accountIdInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      await savedAccountsOf(ctx).get(ctx.workspace.workspaceId, input.id);
      await workspaceStore(ctx.db).setActiveAccount(ctx.workspace.id, input.id);
      return { success: true as const };
    }),
});
