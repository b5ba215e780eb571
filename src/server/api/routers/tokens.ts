import {
  createToken,
  deleteTokens,
  revealToken,
  setTokenStatus,
  tokenRulesOf,
  updateToken,
} from "../../actions/tokens";
import { orFailure } from "../../core/messages";
import type { TokenDraft } from "../../gateway/token-writes";
import { tokenOptions } from "../../prices/token-options";
import { listed } from "../../accounts/browser-accounts";
import { accountOf } from "../../accounts/overview";
import { exportKeys, keysEnv, keysJson, type KeyTarget } from "../../actions/key-export";
import { Refusal } from "../../core/errors";
import type { LiveSession } from "../../session/store";
import { tokens as tokensOf } from "../../site-data/site-data";
import { act, actorOf } from "../acting";
import { sessionsFor, siteDepsOf, type AuthedContext } from "../site-deps";
import {
  accountTokensSuccess,
  keyExportInput,
  keyExportSuccess,
  revealedKeySuccess,
  tokenCreateInput,
  tokenOptionsSuccess,
  tokenDeleteInput,
  tokenDeleteSuccess,
  tokenIdInput,
  tokenRulesSuccess,
  tokenStatusInput,
  tokenUpdateInput,
  tokenWriteSuccess,
} from "../schemas/actions";
import { authedProcedure, router, sentOnce } from "../trpc";
import { rest, rests } from "../rest-routes";

/** The accounts a request may act on (one its workspace no longer holds is left out), keyed `siteId:siteUserId`. */
async function actingSessions(ctx: AuthedContext): Promise<{ key: string; name: string; session: LiveSession }[]> {
  const sessions = (await sessionsFor(ctx, "all")).filter((s) => s.heldUntil === undefined);
  return sessions.map((session) => {
    const { username, displayName } = listed(session, false);
    const named = displayName || username;
    const site = session.site?.name ?? session.siteUrl;
    return {
      key: `${session.siteId}:${session.siteUserId}`,
      name: session.alias || (named ? `${site} · ${named}` : `${site} · 用户 ${session.siteUserId}`),
      session,
    };
  });
}

/** An ISO time as the sites keep it (Unix seconds); null: never. */
const seconds = (at: string | null) => (at === null ? null : Math.floor(Date.parse(at) / 1000));

/**
 * The account's API keys on its site (docs/design.md 20): the list is `account.tokens`; these change
 * them. Every one is a write (CSRF-checked, counted per account, in 操作记录); the full key only
 * through `reveal`, answered `no-store` like every account answer.
 */
export const tokensRouter = router({
  /** The family's rules for the form (name length, groups, deletes) and the site's critical budget left. */
  rules: authedProcedure
    .meta(rest("GET", "/api/account/tokens/rules"))
    .output(orFailure(tokenRulesSuccess))
    .query(({ ctx }) => act(ctx, false, (account, deps) => tokenRulesOf(account, deps))),

  /** The groups (with their ratios) and models a token may be given, for the form's pickers. */
  options: authedProcedure
    .meta(
      rest("GET", "/api/account/tokens/options", {
        summary: "令牌可选的分组和模型",
        description:
          "账户的站点让令牌选择的分组及倍率，以及账户可用的模型（价格表每小时至多读取一次，可用模型每天至多一次，分组变化后或无模型时即时读取）；站点不公开时为 null。",
      }),
    )
    .output(orFailure(tokenOptionsSuccess))
    .query(({ ctx }) => act(ctx, false, (account, deps) => tokenOptions(ctx.db, account, deps))),

  create: authedProcedure
    .meta(rest("POST", "/api/account/tokens"))
    .use(sentOnce)
    .input(tokenCreateInput)
    .output(orFailure(tokenWriteSuccess))
    .mutation(({ ctx, input }) =>
      act(ctx, true, (account, deps, actor) =>
        createToken(ctx.db, account, actor, { ...input, expiresAt: seconds(input.expiresAt) }, deps),
      ),
    ),

  /** Changes the fields given; the others stay as the site has them (the site is read first). */
  update: authedProcedure
    .meta(rest("PATCH", "/api/account/tokens/{id}"))
    .input(tokenUpdateInput)
    .output(orFailure(tokenWriteSuccess))
    .mutation(({ ctx, input: { id, expiresAt, ...rest } }) => {
      const patch: Partial<TokenDraft> = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
      if (expiresAt !== undefined) patch.expiresAt = seconds(expiresAt);
      return act(ctx, true, async (account, deps, actor) => ({
        id,
        ...(await updateToken(ctx.db, account, actor, id, patch, deps)),
      }));
    }),

  setStatus: authedProcedure
    .meta(rest("POST", "/api/account/tokens/{id}/status"))
    .input(tokenStatusInput)
    .output(orFailure(tokenWriteSuccess))
    .mutation(({ ctx, input }) =>
      act(ctx, true, async (account, deps, actor) => ({
        id: input.id,
        ...(await setTokenStatus(ctx.db, account, actor, input.id, input.enabled, deps)),
      })),
    ),

  /** Deletes one or more (one-api's deletes cannot be undone: `permanent` says so). */
  remove: authedProcedure
    .meta(
      rests(
        rest("POST", "/api/account/tokens/delete"),
        rest("DELETE", "/api/account/tokens/{id}", { input: "none", shape: ({ params }) => ({ ids: [params.id] }) }),
      ),
    )
    .input(tokenDeleteInput)
    .output(orFailure(tokenDeleteSuccess))
    .mutation(({ ctx, input }) =>
      act(ctx, true, (account, deps, actor) => deleteTokens(ctx.db, account, actor, input.ids, deps)),
    ),

  /** Every account's tokens (keys masked), for choosing keys to export across accounts. */
  everyAccount: authedProcedure
    .meta(
      rest("GET", "/api/tokens/accounts", {
        summary: "全部账户的令牌",
        description: "工作区（或浏览器）中每个账户的令牌（密钥打码），供批量导出时选择；读不到的账户附原因。",
      }),
    )
    .output(accountTokensSuccess)
    .query(async ({ ctx }) => {
      const deps = siteDepsOf(ctx);
      const accounts = await Promise.all(
        (await actingSessions(ctx)).map(async ({ key, name, session }) => {
          const base = { account: key, name, siteName: session.site?.name ?? session.siteUrl };
          try {
            const page = await tokensOf(accountOf(session), { page: 1, pageSize: 100 }, deps);
            const list = page.items.map((t) => ({ id: t.id, name: t.name, status: t.status, key: t.key }));
            return { ...base, tokens: list, message: null };
          } catch (error) {
            if (!(error instanceof Refusal)) throw error;
            return { ...base, tokens: null, message: error.message };
          }
        }),
      );
      return { success: true as const, data: { accounts } };
    }),

  /**
   * Keys across accounts at once, for the clients people use: each revealed as 显示密钥 reveals one
   * (in 操作记录, within the site's budget); those that cannot be had are listed with the reason.
   */
  exportKeys: authedProcedure
    .meta(
      rest("POST", "/api/tokens/export", {
        summary: "批量导出密钥",
        description:
          "所选令牌（或每个账户全部启用的令牌）的完整密钥，附 .env、JSON、CC Switch 与 Cherry Studio 的导入链接；一次至多 50 个。" +
          "每个密钥的读取记入该账户的操作记录，并计入站点查看密钥的次数限制。",
      }),
    )
    .input(keyExportInput)
    .output(keyExportSuccess)
    .mutation(async ({ ctx, input }) => {
      const accounts = await actingSessions(ctx);
      const chosen = input.keys === "all" ? null : new Map(input.keys.map((k) => [k.account, k.ids]));
      const targets: KeyTarget[] = accounts.flatMap(({ key, name, session }) => {
        const ids = chosen === null ? "all" : chosen.get(key);
        if (ids === undefined) return [];
        return [{ key, name, account: accountOf(session), actor: actorOf(ctx, session), ids }];
      });
      const unknown = chosen === null ? [] : [...chosen.keys()].filter((k) => !accounts.some((a) => a.key === k));
      if (unknown.length > 0) throw new Refusal("所选的账户不在这里", "NOT_FOUND");
      const { keys, failed } = await exportKeys(ctx.db, targets, siteDepsOf(ctx));
      return { success: true as const, data: { keys, failed, env: keysEnv(keys), json: keysJson(keys) } };
    }),

  /**
   * The full key and ready client configurations; never kept here. A read of the site, so it
   * spends none of the account's writes (new-api counts it among the site's critical calls).
   */
  reveal: authedProcedure
    .meta(rest("POST", "/api/account/tokens/{id}/key", { input: "none" }))
    .input(tokenIdInput)
    .output(orFailure(revealedKeySuccess))
    .mutation(({ ctx, input }) =>
      act(ctx, false, (account, deps, actor) => revealToken(ctx.db, account, actor, input.id, deps)),
    ),
});
