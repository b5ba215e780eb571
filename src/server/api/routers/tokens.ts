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
import { act } from "../acting";
import {
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
          "账户的站点让令牌选择的分组及倍率，以及账户可用的模型（与模型价格同一次读取，每小时至多一次）；站点不公开时为 null。",
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
