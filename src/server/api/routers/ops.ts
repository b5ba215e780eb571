import { createHash, timingSafeEqual } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { metrics } from "../../core/metrics";
import { sessionStore } from "../../session/store";
import { workspaceStore } from "../../workspace/workspaces";
import { env } from "../../core/env";
import { heapState } from "../../core/heap";
import { heartbeats } from "../../core/heartbeat";
import { storeProblem } from "../../db/health";
import { sharedBudgetState } from "../../gateway/gate";
import { publicProcedure, router } from "../trpc";
import { rest } from "../rest-routes";

/** When this process started (ms): the job runner has had no tick yet in its first interval. */
const STARTED = Date.now();

const readySchema = z
  .object({
    ready: z.boolean(),
    reasons: z.array(z.string()).describe("不就绪的原因（就绪时为空）"),
    checks: z.object({
      store: z.string().describe("ok，或数据库的问题"),
      jobs: z.string().describe("ok、starting（启动后第一个间隔内），或后台任务停止的说明"),
      heapUsedShare: z.number().describe("已用堆内存占上限的比例"),
      heapLiveShare: z.number().describe("上次完整垃圾回收后仍在用的堆内存占上限的比例（超过 0.75 即不就绪）"),
      budget: z
        .string()
        .describe(
          "站点请求预算保存在哪里：memory（本进程，SQLite）、postgres、redis；共享存储不可用时为 fallback 说明（各实例按份额，不影响就绪）",
        ),
    }),
  })
  .meta({ id: "Readiness" });

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Health, readiness and metrics for load balancers, orchestrators and monitoring (docs/design.md 23):
 * `health` says the process answers; `ready` that it can serve, with the reasons when it cannot.
 * Neither needs a session, and neither says anything secret; `metrics` asks for METRICS_TOKEN.
 */
export const opsRouter = router({
  /**
   * The instance's metrics in Prometheus' text format, for the bearer of METRICS_TOKEN; without
   * one set, not served (404). The deployment's sessions and saved accounts are counted now.
   */
  metrics: publicProcedure
    .meta(rest("GET", "/api/metrics", { answer: "text" }))
    .output(z.string())
    .query(async ({ ctx }) => {
      ctx.resHeaders.set("Cache-Control", "no-store");
      const token = env().METRICS_TOKEN;
      if (!token) throw new TRPCError({ code: "NOT_FOUND", message: "指标未开启：设置 METRICS_TOKEN 后可用" });
      const given = ctx.headers.get("authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? "";
      if (!timingSafeEqual(digest(given), digest(token))) {
        throw new TRPCError({ code: "UNAUTHORIZED", message: "读取指标需要以 METRICS_TOKEN 作为 Bearer 令牌" });
      }
      const m = metrics();
      const [sessions, saved] = await Promise.all([
        sessionStore(ctx.db).countLive(),
        workspaceStore(ctx.db).countSavedAccounts(),
      ]);
      m.sessions.set(sessions);
      m.savedAccounts.set(saved);
      return m.registry.metrics();
    }),

  health: publicProcedure
    .meta(rest("GET", "/api/health"))
    .output(z.object({ status: z.literal("ok"), uptimeSeconds: z.number() }).meta({ id: "Health" }))
    .query(({ ctx }) => {
      ctx.resHeaders.set("Cache-Control", "no-store");
      return { status: "ok" as const, uptimeSeconds: Math.round((Date.now() - STARTED) / 1000) };
    }),

  ready: publicProcedure
    .meta(rest("GET", "/api/ready", { answer: "ready" }))
    .output(readySchema)
    .query(async ({ ctx }) => {
      ctx.resHeaders.set("Cache-Control", "no-store");
      const reasons: string[] = [];
      const store = await storeProblem(ctx.db, 1000);
      if (store) reasons.push(store);
      // The runner beats every tick: silent for three ticks means it stopped.
      const tickMs = env().JOB_TICK_SECONDS * 1000;
      const beats = [...heartbeats().values()];
      const now = Date.now();
      let jobs = "ok";
      if (beats.length === 0) {
        if (now - STARTED > 3 * tickMs) jobs = "后台任务没有启动";
      } else if (now - Math.max(...beats) > 3 * tickMs) {
        jobs = `后台任务已 ${Math.round((now - Math.max(...beats)) / 1000)} 秒没有运行`;
      }
      if (beats.length === 0 && jobs === "ok") jobs = "starting";
      if (jobs !== "ok" && jobs !== "starting") reasons.push(jobs);
      const heap = heapState();
      if (heap.problem) reasons.push(heap.problem);
      const b = sharedBudgetState();
      const budget = b.fallback
        ? `fallback：${b.store === "redis" ? "Redis" : "PostgreSQL"} 不可用，本实例按预算的 1/${b.instances} 调用站点`
        : b.store;
      return {
        ready: reasons.length === 0,
        reasons,
        checks: {
          store: store ?? "ok",
          jobs,
          heapUsedShare: heap.usedShare,
          heapLiveShare: heap.liveShare,
          budget,
        },
      };
    }),
});
