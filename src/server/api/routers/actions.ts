import { z } from "zod";
import pLimit from "p-limit";
import { listed } from "../../accounts/browser-accounts";
import { checkin, checkinStatus } from "../../actions/checkin";
import { takeCritical, takeWrite } from "../../actions/critical";
import { actionRecords, actionRecordsCsv, recordAction, recordedSend } from "../../actions/records";
import { fileSuccess } from "../schemas/accounts";
import { proxyRequest } from "../../actions/proxy";
import { forgetAccountReads, siteCall, siteProfile } from "../../site-data/calls";
import { ActionRefused, redeem } from "../../actions/redeem";
import { answered } from "../../core/errors";
import { failure, orFailure } from "../../core/messages";
import {
  actionRecordsSuccess,
  checkinAllSuccess,
  checkinResultSuccess,
  checkinStatusSuccess,
  recordsInput,
  redeemInput,
  redeemSuccess,
} from "../schemas/actions";
import { isLedgerOnly } from "../../workspace/scope";
import { sessionsFor, startLedgerSync, type AuthedContext } from "../site-deps";
import { authedProcedure, router, sentOnce } from "../trpc";
import { act, actorOf } from "../acting";
import { rest, rests, type RestParts } from "../rest-routes";

/** After a write the site logged (a top-up, a check-in), the ledger catches up, where it is kept (docs/design.md 13). */
function followLedger(ctx: AuthedContext): void {
  if (ctx.ledgerSyncMinutes > 0) startLedgerSync(ctx, ctx.session);
}

/** A call the proxy forwards: the method, the path after /api/site/ as sent, the query string, the JSON body. */
const proxyInput = z.object({
  method: z.enum(["GET", "POST", "PUT", "DELETE"]),
  path: z.string().max(300),
  query: z.string().max(4096).default(""),
  body: z.unknown().optional(),
});

/** The proxy's REST call: the method, what follows /api/site/ as the request spelled it (checked by the router), the query string, the body. */
const proxyCall = ({ method, params, search, body }: RestParts) => ({ method, path: params.path, query: search, body });

/** The largest body the proxy passes on. */
const PROXY_MAX_BODY = 64 * 1024;

/** The site's own answer, as it sent it, or ours when it was not sent. */
const proxyAnswer = z.record(z.string(), z.unknown());

async function proxied(ctx: AuthedContext, input: z.infer<typeof proxyInput>) {
  // The route is checked before anything is counted: a refused path spends no write.
  const answer = await act(ctx, false, async (account, deps, actor) => {
    const site = await siteProfile(account, deps);
    const request = proxyRequest(site.family, input.method, input.path, input.query, input.body);
    if (!request.write) return siteCall(account, request, deps);
    const tooFast = takeWrite(`${actor.siteId}:${actor.siteUserId}`);
    if (tooFast) throw new ActionRefused(tooFast);
    const critical = site.family === "new-api" || site.family === "unknown";
    if (critical && request.path === "/api/user/topup" && !takeCritical(site.id)) {
      throw new ActionRefused("站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请稍后再试");
    }
    const record = (ok: boolean, message: string) =>
      recordAction(ctx.db, actor, {
        kind: "proxy",
        ok,
        message: `${input.method} ${request.path}：${message}`,
        quota: null,
      });
    const sent = await recordedSend(record, () => siteCall(account, request, deps));
    forgetAccountReads(account);
    await record(
      sent.success === true,
      sent.success === true ? "成功" : (typeof sent.message === "string" && sent.message) || "失败",
    );
    return sent;
  });
  return answer.success ? answer.data : answer;
}

export const actionsRouter = router({
  /** Redeems a code on the account's site; the balance and the ledger follow. */
  redeem: authedProcedure
    .meta(rest("POST", "/api/account/redeem"))
    .use(sentOnce)
    .input(redeemInput)
    .output(orFailure(redeemSuccess))
    .mutation(async ({ ctx, input }) => {
      const answer = await act(ctx, true, (account, deps, actor) => redeem(ctx.db, account, actor, input.code, deps));
      if (answer.success) followLedger(ctx);
      return answer;
    }),

  /** Whether the account can check in today, and the month's check-ins where the site keeps them. */
  checkinStatus: authedProcedure
    .meta(rest("GET", "/api/account/checkin"))
    .output(orFailure(checkinStatusSuccess))
    .query(({ ctx }) => act(ctx, false, (account, deps) => checkinStatus(account, deps))),

  /** Checks the account in when today's is not done. */
  checkin: authedProcedure
    .meta(rest("POST", "/api/account/checkin", { input: "none" }))
    .output(orFailure(checkinResultSuccess))
    .mutation(async ({ ctx }) => {
      const answer = await act(ctx, true, (account, deps, actor) => checkin(ctx.db, account, actor, deps));
      if (answer.success && answer.data.state === "done") followLedger(ctx);
      return answer;
    }),

  /** 全部签到: every account shown (the browser's, or the workspace's) checked in where it can be, side by side. */
  checkinAll: authedProcedure.output(checkinAllSuccess).mutation(async ({ ctx }) => {
    const sessions = await sessionsFor(ctx, "all");
    const limit = pLimit(4);
    const results = await Promise.all(
      sessions.map((session) =>
        limit(async () => {
          const who = listed(session, false);
          const name = `${session.site?.name ?? "已移除的站点"} · ${who.displayName || who.username || `用户 ${who.userId}`}`;
          const one = { ...ctx, session, saved: null };
          if (isLedgerOnly(session)) return { name, state: "failed" as const, message: "需要重新授权" };
          const answer = await answered(
            act(one, true, (account, deps, actor) => checkin(ctx.db, account, actor, deps)),
          );
          return answer.success
            ? { name, state: answer.data.state, message: answer.data.message }
            : { name, state: "failed" as const, message: answer.message };
        }),
      ),
    );
    return { success: true as const, data: { results } };
  }),

  /** The proxy's reads: a GET of an allowed user route of the account's site, its answer as the site sent it. */
  proxyRead: authedProcedure
    .meta(rest("GET", "/api/site/{path...}", { shape: proxyCall }))
    .input(proxyInput)
    .output(proxyAnswer)
    .query(({ ctx, input }) => (input.method === "GET" ? proxied(ctx, input) : failure("代理的读请求只能是 GET"))),

  /** The proxy's writes (POST, PUT, DELETE of an allowed route): checked as every write, kept in 操作记录. */
  proxyWrite: authedProcedure
    .meta(
      rests(
        rest("POST", "/api/site/{path...}", { shape: proxyCall, maxBody: PROXY_MAX_BODY }),
        rest("PUT", "/api/site/{path...}", { shape: proxyCall, maxBody: PROXY_MAX_BODY }),
        rest("DELETE", "/api/site/{path...}", { input: "none", shape: proxyCall }),
      ),
    )
    .input(proxyInput)
    .output(proxyAnswer)
    .mutation(({ ctx, input }) => (input.method !== "GET" ? proxied(ctx, input) : failure("GET 请走代理的读请求"))),

  /** 操作记录: the account's writes made here, newest first. */
  records: authedProcedure
    .meta(rest("GET", "/api/account/actions"))
    .input(recordsInput)
    .output(actionRecordsSuccess)
    .query(async ({ ctx, input }) => {
      const actor = actorOf(ctx);
      const { total, items } = await actionRecords(ctx.db, actor, input);
      return {
        success: true as const,
        data: { ...input, total, hasMore: input.page * input.pageSize < total, items },
      };
    }),

  /** 操作记录 as a CSV download (every record kept, newest first). */
  recordsCsv: authedProcedure
    .meta(rest("GET", "/api/account/actions.csv", { answer: "file" }))
    .output(fileSuccess)
    .query(async ({ ctx }) => {
      const actor = actorOf(ctx);
      const csv = await actionRecordsCsv(ctx.db, actor);
      const day = new Date().toISOString().slice(0, 10);
      return {
        success: true as const,
        data: {
          filename: `actions_${actor.siteId}_${actor.siteUserId}_${day}.csv`,
          contentType: "text/csv; charset=utf-8",
          body: new TextEncoder().encode(csv),
        },
      };
    }),
});
