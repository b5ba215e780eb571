import { getHeapStatistics } from "node:v8";
import { z } from "zod";
import { env } from "../../core/env";
import { heartbeats } from "../../core/heartbeat";
import { storeProblem } from "../../db/health";
import { publicProcedure, router } from "../trpc";

/** When this process started (ms): the job runner has had no tick yet in its first interval. */
const STARTED = Date.now();
/** The heap may fill to this share of its limit before the instance says it is not ready. */
const HEAP_READY_SHARE = 0.9;

const readySchema = z
  .object({
    ready: z.boolean(),
    reasons: z.array(z.string()).describe("不就绪的原因（就绪时为空）"),
    checks: z.object({
      store: z.string().describe("ok，或数据库的问题"),
      jobs: z.string().describe("ok、starting（启动后第一个间隔内），或后台任务停止的说明"),
      heapUsedShare: z.number().describe("已用堆内存占上限的比例"),
    }),
  })
  .meta({ id: "Readiness" });

/**
 * Health and readiness for load balancers and orchestrators (design.md 23): `health` says the
 * process answers; `ready` that it can serve, with the reasons when it cannot. Neither needs a
 * session, and neither says anything secret.
 */
export const opsRouter = router({
  health: publicProcedure
    .output(z.object({ status: z.literal("ok"), uptimeSeconds: z.number() }).meta({ id: "Health" }))
    .query(({ ctx }) => {
      ctx.resHeaders.set("Cache-Control", "no-store");
      return { status: "ok" as const, uptimeSeconds: Math.round((Date.now() - STARTED) / 1000) };
    }),

  ready: publicProcedure.output(readySchema).query(async ({ ctx }) => {
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
    const heap = getHeapStatistics();
    const share = Math.round((heap.used_heap_size / heap.heap_size_limit) * 1000) / 1000;
    if (share > HEAP_READY_SHARE) reasons.push(`内存将满（已用堆内存 ${Math.round(share * 100)}%）`);
    return { ready: reasons.length === 0, reasons, checks: { store: store ?? "ok", jobs, heapUsedShare: share } };
  }),
});
