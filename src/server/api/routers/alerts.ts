import { alertChannels, testChannel } from "../../alerts/channels";
import { alertDigests, sendDigestNow } from "../../alerts/digests";
import { alertHistory } from "../../alerts/history";
import { statementLinkState, useStatementLink } from "../../alerts/statement-links";
import { fileSuccess, type FileData } from "../schemas/accounts";
import { alertRules, ruleView } from "../../alerts/rules";
import { failure, orFailure, type Failure } from "../../core/messages";
import { Refusal } from "../../core/errors";
import {
  alertsInput,
  alertsSuccess,
  channelCreatedSuccess,
  channelInput,
  channelTestSuccess,
  channelsSuccess,
  digestInput,
  digestSentSuccess,
  digestSuccess,
  digestsSuccess,
  idInput,
  linkInput,
  linkStateSuccess,
  removedSuccess,
  ruleInput,
  ruleSuccess,
  reconciliationInput,
  reconciliationSuccess,
  ruleUpdateInput,
  rulesSuccess,
  timeZoneInput,
  timeZoneSuccess,
} from "../schemas/alerts";
import { publicProcedure, router, savedAccountsOf, workspaceProcedure, sentOnce } from "../trpc";
import { heldOf, savedName } from "../../workspace/saved-accounts";
import { daysBetween } from "../../core/time";
import { reconcile, reconciledUsd } from "../../ledger/reconcile";
import { siteRegistry } from "../../sites/registry";
import { rest } from "../rest-routes";

/** Days one reconciliation covers at most (each is a few small reads). */
const RECONCILE_MAX_DAYS = 92;

/** A refusal of the alerts (a bad threshold, an address it will not send to) is answered in words by the API's error map. */
async function answer<T>(run: () => Promise<T>): Promise<{ success: true; data: T } | Failure> {
  return { success: true, data: await run() };
}

const NO_RULE = "没有这条规则";
const NO_CHANNEL = "没有这个通知渠道";
const NO_DIGEST = "没有这个摘要";

/**
 * 提醒 (docs/design.md 21): a workspace's channels, rules and alerts. The server evaluates the rules
 * after its syncs and delivers each event once to the rule's channels.
 */
export const alertsRouter = router({
  list: workspaceProcedure
    .meta(rest("GET", "/api/alerts"))
    .input(alertsInput)
    .output(alertsSuccess)
    .query(async ({ ctx, input }) => {
      await alertRules(ctx.db).settings(ctx.workspace.workspaceId);
      const { total, open, items } = await alertHistory(ctx.db, ctx.workspace.workspaceId, input);
      return {
        success: true as const,
        data: { page: input.page, pageSize: input.pageSize, total, open, alerts: items },
      };
    }),

  channels: workspaceProcedure
    .meta(rest("GET", "/api/alerts/channels"))
    .output(channelsSuccess)
    .query(async ({ ctx }) => ({
      success: true as const,
      data: { channels: await alertChannels(ctx.db).list(ctx.workspace.workspaceId) },
    })),

  createChannel: workspaceProcedure
    .meta(rest("POST", "/api/alerts/channels"))
    .use(sentOnce)
    .input(channelInput)
    .output(orFailure(channelCreatedSuccess))
    .mutation(({ ctx, input }) => answer(() => alertChannels(ctx.db).create(ctx.workspace.workspaceId, input))),

  removeChannel: workspaceProcedure
    .meta(rest("DELETE", "/api/alerts/channels/{id}"))
    .input(idInput)
    .output(orFailure(removedSuccess))
    .mutation(async ({ ctx, input }) => {
      const workspaceId = ctx.workspace.workspaceId;
      const removed = await alertChannels(ctx.db).remove(workspaceId, input.id);
      if (!removed) return failure(NO_CHANNEL);
      // Rules keep their other channels; a digest left with none goes.
      await alertRules(ctx.db).dropChannel(workspaceId, input.id);
      await alertDigests(ctx.db).dropChannel(workspaceId, input.id);
      return { success: true as const, data: { removed } };
    }),

  /** Sends a test message to the channel now (not through the outbox), and says how it went. */
  testChannel: workspaceProcedure
    .meta(rest("POST", "/api/alerts/channels/{id}/test", { input: "none" }))
    .input(idInput)
    .output(orFailure(channelTestSuccess))
    .mutation(async ({ ctx, input }) => {
      const own = await alertChannels(ctx.db).ownIds(ctx.workspace.workspaceId, [input.id]);
      if (own.length === 0) return failure(NO_CHANNEL);
      return answer(async () => {
        const { timeZone } = await alertRules(ctx.db).settings(ctx.workspace.workspaceId);
        return { message: await testChannel(ctx.db, { id: ctx.workspace.workspaceId, timeZone }, input.id) };
      });
    }),

  rules: workspaceProcedure
    .meta(rest("GET", "/api/alerts/rules"))
    .output(rulesSuccess)
    .query(async ({ ctx }) => {
      const rules = alertRules(ctx.db);
      const { timeZone } = await rules.settings(ctx.workspace.workspaceId);
      const list = await rules.list(ctx.workspace.workspaceId);
      return { success: true as const, data: { rules: list.map(ruleView), timeZone } };
    }),

  createRule: workspaceProcedure
    .meta(rest("POST", "/api/alerts/rules"))
    .use(sentOnce)
    .input(ruleInput)
    .output(orFailure(ruleSuccess))
    .mutation(async ({ ctx, input }) => {
      const workspaceId = ctx.workspace.workspaceId;
      if (input.account !== "all") {
        try {
          await savedAccountsOf(ctx).get(workspaceId, input.account);
        } catch (error) {
          if (error instanceof Refusal && error.code === "NOT_FOUND") return failure(error.message);
          throw error;
        }
      }
      const channels = input.channels ?? [];
      const own = await alertChannels(ctx.db).ownIds(workspaceId, channels);
      if (own.length !== new Set(channels).size) return failure(NO_CHANNEL);
      return answer(async () => {
        await alertRules(ctx.db).settings(workspaceId);
        return { rule: ruleView(await alertRules(ctx.db).create(workspaceId, { ...input, channels: own })) };
      });
    }),

  updateRule: workspaceProcedure
    .meta(rest("PATCH", "/api/alerts/rules/{id}"))
    .input(ruleUpdateInput)
    .output(orFailure(ruleSuccess))
    .mutation(async ({ ctx, input: { id, ...change } }) => {
      const workspaceId = ctx.workspace.workspaceId;
      if (change.channels) {
        const own = await alertChannels(ctx.db).ownIds(workspaceId, change.channels);
        if (own.length !== new Set(change.channels).size) return failure(NO_CHANNEL);
        change.channels = own;
      }
      const result = await answer(() => alertRules(ctx.db).update(workspaceId, id, change));
      if (!result.success) return result;
      return result.data ? { success: true as const, data: { rule: ruleView(result.data) } } : failure(NO_RULE);
    }),

  removeRule: workspaceProcedure
    .meta(rest("DELETE", "/api/alerts/rules/{id}"))
    .input(idInput)
    .output(orFailure(removedSuccess))
    .mutation(async ({ ctx, input }) => {
      const removed = await alertRules(ctx.db).remove(ctx.workspace.workspaceId, input.id);
      return removed ? { success: true as const, data: { removed } } : failure(NO_RULE);
    }),

  /** 对账: each day's balance change against what the account's log explains. */
  reconciliation: workspaceProcedure
    .meta(rest("GET", "/api/alerts/reconciliation"))
    .input(reconciliationInput)
    .output(orFailure(reconciliationSuccess))
    .query(async ({ ctx, input }) => {
      if (daysBetween(input.from, input.to) >= RECONCILE_MAX_DAYS) {
        return failure(`对账一次至多 ${RECONCILE_MAX_DAYS} 天`);
      }
      let account;
      try {
        account = await savedAccountsOf(ctx).get(ctx.workspace.workspaceId, input.account);
      } catch (error) {
        if (error instanceof Refusal && error.code === "NOT_FOUND") return failure(error.message);
        throw error;
      }
      const site = await siteRegistry(ctx.db).profiled(account.siteId);
      if (!site) return failure("账户所在的站点已移除");
      const q = site.money.quotaPerUnit;
      const days = await reconcile(
        ctx.db,
        { siteId: account.siteId, siteUserId: account.siteUserId, ...heldOf(account), quotaPerUnit: q },
        input,
      );
      return {
        success: true as const,
        data: {
          account: { id: account.id, name: savedName(account) },
          days: days.map((d) => reconciledUsd(d, q)),
        },
      };
    }),

  /** The time zone "today" is counted in (spend_today_above). */
  setTimeZone: workspaceProcedure
    .meta(rest("PATCH", "/api/alerts/settings"))
    .input(timeZoneInput)
    .output(orFailure(timeZoneSuccess))
    .mutation(({ ctx, input }) =>
      answer(async () => {
        await alertRules(ctx.db).setTimeZone(ctx.workspace.workspaceId, input.timeZone);
        return { timeZone: input.timeZone };
      }),
    ),

  /** The workspace's digests (one per cadence) and the time zone their times are in. */
  digests: workspaceProcedure
    .meta(rest("GET", "/api/alerts/digests"))
    .output(digestsSuccess)
    .query(async ({ ctx }) => {
      const { timeZone } = await alertRules(ctx.db).settings(ctx.workspace.workspaceId);
      return {
        success: true as const,
        data: { digests: await alertDigests(ctx.db).list(ctx.workspace.workspaceId), timeZone },
      };
    }),

  /** Sets the digest of a cadence (added, or changed when it exists). */
  setDigest: workspaceProcedure
    .meta(rest("POST", "/api/alerts/digests"))
    .input(digestInput)
    .output(orFailure(digestSuccess))
    .mutation(async ({ ctx, input }) => {
      const workspaceId = ctx.workspace.workspaceId;
      const own = await alertChannels(ctx.db).ownIds(workspaceId, input.channels);
      if (own.length !== new Set(input.channels).size) return failure(NO_CHANNEL);
      return answer(async () => ({
        digest: await alertDigests(ctx.db).set(workspaceId, { ...input, channels: own }, ctx.origin),
      }));
    }),

  removeDigest: workspaceProcedure
    .meta(rest("DELETE", "/api/alerts/digests/{id}"))
    .input(idInput)
    .output(orFailure(removedSuccess))
    .mutation(async ({ ctx, input }) => {
      const removed = await alertDigests(ctx.db).remove(ctx.workspace.workspaceId, input.id);
      return removed ? { success: true as const, data: { removed } } : failure(NO_DIGEST);
    }),

  /** 立即发送: the last period's digest to its channels now (its schedule is unchanged). */
  sendDigest: workspaceProcedure
    .meta(rest("POST", "/api/alerts/digests/{id}/send", { input: "none" }))
    .use(sentOnce)
    .input(idInput)
    .output(orFailure(digestSentSuccess))
    .mutation(async ({ ctx, input }) => {
      const queued = await sendDigestNow(ctx.db, ctx.workspace.workspaceId, input.id);
      return queued
        ? { success: true as const, data: { message: "摘要已排队发送，稍后可在渠道中看到" } }
        : failure(NO_DIGEST);
    }),

  /** What a statement link is now (the page a link opens shows it); never uses it. */
  statementLink: publicProcedure
    .input(linkInput)
    .output(linkStateSuccess)
    .query(async ({ ctx, input }) => {
      const found = await statementLinkState(ctx.db, input.token);
      return {
        success: true as const,
        data: {
          state: found.state,
          month: found.state === "unknown" ? null : found.month,
          expiresAt: found.state === "ready" ? found.expiresAt.toISOString() : null,
        },
      };
    }),

  /** The statement behind a one-time link: it works once. */
  statementByLink: publicProcedure
    .meta(rest("GET", "/api/alerts/statement/{token}", { answer: "file" }))
    .input(linkInput)
    .output(orFailure(fileSuccess))
    .query(async ({ ctx, input }) => {
      const used = await useStatementLink(ctx.db, input.token);
      if ("refused" in used) return failure(used.refused);
      const data: FileData = { filename: used.filename, contentType: "application/pdf", body: used.body };
      return { success: true as const, data };
    }),
});
