/** The OpenAPI paths of health and readiness (docs/design.md 23). */
import { json, ref } from "./common";

const readiness = {
  type: "object",
  properties: {
    ready: { type: "boolean" },
    reasons: { type: "array", items: { type: "string" }, description: "不就绪的原因" },
    checks: {
      type: "object",
      properties: {
        store: { type: "string", description: "ok，或数据库的问题" },
        jobs: { type: "string", description: "ok、starting，或后台任务停止的说明" },
        heapUsedShare: { type: "number", description: "已用堆内存占上限的比例" },
        heapLiveShare: {
          type: "number",
          description: "上次完整垃圾回收后仍在用的堆内存占上限的比例（超过 0.75 即不就绪）",
        },
        budget: {
          type: "string",
          description:
            "站点请求预算保存在哪里：memory、postgres、redis；Redis 不可用时为 fallback 说明（各实例按份额，仍就绪）",
        },
      },
    },
  },
  required: ["ready", "reasons", "checks"],
};

export function opsPaths(): Record<string, object> {
  return {
    "/api/health": {
      get: {
        operationId: "health",
        summary: "存活检查",
        description: "进程能答复即 200。无需会话。",
        security: [],
        responses: {
          "200": {
            description: "进程在运行",
            content: json({
              type: "object",
              properties: { status: { const: "ok" }, uptimeSeconds: { type: "number" } },
              required: ["status", "uptimeSeconds"],
            }),
          },
        },
      },
    },
    "/api/metrics": {
      get: {
        operationId: "metrics",
        summary: "Prometheus 指标",
        description:
          "本实例的指标（Prometheus 文本格式）：按路由与状态的请求数和耗时、按站点与结果的站点调用、预算等待与 429 暂停、" +
          "后台任务的运行、失败与延迟、写入账本的条目、会话与已保存账户数、进程内存。需以 METRICS_TOKEN 作为 Bearer 令牌；" +
          "未设置 METRICS_TOKEN 时不提供（404）。",
        security: [{ metricsToken: [] }],
        responses: {
          "200": { description: "指标", content: { "text/plain": { schema: { type: "string" } } } },
          "401": { description: "缺少或错误的令牌", content: json(ref("Failure")) },
          "404": { description: "未设置 METRICS_TOKEN", content: json(ref("Failure")) },
        },
      },
    },
    "/api/ready": {
      get: {
        operationId: "ready",
        summary: "就绪检查",
        description:
          "实例能否提供服务：数据库 1 秒内答复、本版本的迁移都已应用、一次小写入成功、后台任务在运行、堆内存未满。" +
          "就绪时 200，否则 503 并列出原因。无需会话，不含任何密钥。",
        security: [],
        responses: {
          "200": { description: "就绪", content: json(readiness) },
          "503": { description: "不就绪，reasons 说明原因", content: json(readiness) },
        },
      },
    },
  };
}
