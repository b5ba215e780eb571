/**
 * The Model Context Protocol endpoint (docs/design.md 26), `/api/mcp`: Streamable HTTP with the
 * official SDK, stateless (each POST its own server and transport, JSON answers), a workspace
 * token as the Bearer. Each tool is a procedure of the router, called through createCaller with
 * the request's credential: its input is the procedure's input schema (plus `account`, the saved
 * account it is about, where the procedure reads one) and its output the procedure's answer, so a
 * read-only token reads and cannot act, and another workspace's account is not found.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createRequestContext } from "../api/context";
import { appRouter, createCaller } from "../api/root";
import { logError } from "../core/log";
import { inputObject } from "./openapi/requests";

type Json = Record<string, unknown>;

type ToolDef = {
  name: string;
  procedure: string;
  description: string;
  /**
   * The procedure is about one saved account: the tool takes `account` and acts on exactly that
   * account or refuses (a tool that writes requires it; one that reads defaults to the first).
   */
  account?: boolean;
  readOnly: boolean;
};

const TOOLS: ToolDef[] = [
  {
    name: "list_accounts",
    procedure: "account.overview",
    description:
      "工作区的全部账户：站点、名称、状态（正常、需要重新授权、站点已移除）、余额、今日消费和预计可用天数（daysLeft：按近 7 天的速度，钱包与套餐合计），以及合计（美元）。refresh=1 时向每个站点实时读取。",
    readOnly: true,
  },
  {
    name: "usage_summary",
    procedure: "usage.summary",
    description:
      "一段时间（from、to，tz 时区的日历日）的用量与花费：按 day、model、token 或 type 分组（groupBy），accounts 为 all 或账户 id 列表。",
    readOnly: true,
  },
  {
    name: "cheapest_account",
    procedure: "prices.cheapest",
    description:
      "某个模型在哪个账户实际最便宜：提供该模型的各账户的价目表价格（已乘分组倍率）与核对得出的实际计费（effective；计费高于价目表的标 overList），能用的在前、按实际计费从便宜到贵，" +
      "并给出范围内（默认近 30 天）对该模型的用量在各账户实际计费下的花费（缓存计入）。模型名称不确切时，suggestions 给出名称中含有它的已知模型。",
    readOnly: true,
  },
  {
    name: "income",
    procedure: "usage.income",
    description:
      "一段时间（from、to）每天进入账户的：充值、兑换码、签到等奖励、退款，与当天消费（其中套餐支付的）和钱包的净变化（美元）。",
    readOnly: true,
  },
  {
    name: "plans",
    procedure: "usage.plans",
    description:
      "各账户的套餐（new-api 的订阅）：本周期剩余额度、下次重置、到期时间；一段时间（from、to）内套餐支付与钱包支付的消费（美元）；" +
      "预计可用天数（daysLeft：按近 7 天的速度，钱包与套餐合计，与 list_accounts 相同）与只用钱包的天数（walletDaysLeft）。",
    readOnly: true,
  },
  {
    name: "usage_cache",
    procedure: "usage.cache",
    description:
      "一段时间（from、to）的缓存：输入 tokens、缓存读取与写入、命中率、按日志倍率缓存省下与写入多花的（美元），按 day、model、token 或 account 分组（groupBy）。",
    readOnly: true,
  },
  {
    name: "fastest_site",
    procedure: "usage.speed",
    description:
      "一段时间（from、to）内各站点各模型的速度：总用时与首字用时的中位数和 90 分位（毫秒），同一模型最快的站点标 fastest。",
    readOnly: true,
  },
  {
    name: "charge_check",
    procedure: "usage.check",
    description:
      "核对扣费：一段时间（from、to）内每条消费是否与日志自己的倍率、站点公开价目表（该分组、当时的价格）相符，按账户与模型汇总实际扣费、应扣、不符条数、多扣，并列出多扣最多的条目。",
    readOnly: true,
  },
  {
    name: "open_alerts",
    procedure: "alerts.list",
    description: "工作区的提醒：state=open 只列打开的（余额不足、令牌被拒、站点不可用等），分页。",
    readOnly: true,
  },
  {
    name: "recent_logs",
    procedure: "account.logs",
    description:
      "一个账户的使用日志（最新在前）：可按类型、模型名、令牌名和时间范围筛选，分页；account 为 list_accounts 中的 id，不填为第一个账户。",
    account: true,
    readOnly: true,
  },
  {
    name: "checkin",
    procedure: "actions.checkin",
    description:
      "为一个账户签到（站点支持签到且今天还没签时）。需要读写权限的 API 令牌；account 为 list_accounts 中的 id。",
    account: true,
    readOnly: false,
  },
];

type ProcedureDef = { inputs: z.ZodType[]; output?: z.ZodType };
const procedures = appRouter._def.procedures as unknown as Record<string, { _def: ProcedureDef }>;

/** The success answer of an output that is an answer or a failure (orFailure). */
function successOf(output: z.ZodType): z.ZodType {
  const def = (output as unknown as { _zod: { def: { type: string; options?: z.ZodType[] } } })._zod.def;
  return def.type === "union" && def.options?.[0] ? def.options[0] : output;
}

/** A JSON Schema whose top is the object itself (the tool listing's rule), its named parts under $defs. */
function objectSchema(schema: z.ZodType): Json {
  const generated = z.toJSONSchema(schema, { io: "output", unrepresentable: "any", target: "draft-2020-12" }) as Json;
  const defs = (generated.$defs ?? {}) as Record<string, Json>;
  const ref = typeof generated.$ref === "string" ? generated.$ref.replace("#/$defs/", "") : null;
  const top = ref ? { ...defs[ref] } : { ...generated };
  delete top.$schema;
  delete top.$ref;
  delete top.$defs;
  return { ...top, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) };
}

const ACCOUNT = {
  type: "integer",
  minimum: 1,
  description: "工作区账户 id（list_accounts 答复中的 id）；读取时不填为第一个账户，签到等修改必须填写",
};

let listing: Json[] | undefined;

/** The tools as listed: each procedure's input and output schema. */
function toolList(): Json[] {
  listing ??= TOOLS.map((tool) => {
    const def = procedures[tool.procedure]?._def;
    if (!def?.output) throw new Error(`MCP tool ${tool.name}: no procedure ${tool.procedure}`);
    const input = inputObject(def.inputs) ?? { properties: {}, required: [] };
    const required = [...input.required, ...(tool.account && !tool.readOnly ? ["account"] : [])];
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: {
        type: "object",
        properties: { ...input.properties, ...(tool.account ? { account: ACCOUNT } : {}) },
        ...(required.length > 0 ? { required } : {}),
      },
      outputSchema: objectSchema(successOf(def.output)),
      annotations: { readOnlyHint: tool.readOnly, openWorldHint: true },
    };
  });
  return listing;
}

type Caller = ReturnType<typeof createCaller>;
type RequestContext = ReturnType<typeof createRequestContext>;

/** The procedure at a dotted path of the caller. */
function procedureOf(caller: Caller, path: string): (input?: unknown) => Promise<unknown> {
  let at: unknown = caller;
  for (const part of path.split(".")) at = (at as Record<string, unknown>)[part];
  return at as (input?: unknown) => Promise<unknown>;
}

const failed = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: message }] });

const MCP_MSG = {
  accountNeeded: "请填写 account（list_accounts 中的账户 id）：修改只针对指定的账户",
  accountInvalid: "account 应为 list_accounts 中的账户 id（正整数）",
} as const;

/**
 * The caller a tool's call goes through: for a tool about one account, a context that names it as
 * `?account=` does for REST (procedures without input read it from there), so the call acts on
 * exactly that account or is refused; a string on failure.
 */
function callerOf(ctx: RequestContext, tool: ToolDef, args: Json): Caller | string {
  if (!tool.account) return createCaller(ctx);
  const account = args.account;
  if (account === undefined || account === null) {
    return tool.readOnly ? createCaller(ctx) : MCP_MSG.accountNeeded;
  }
  if (typeof account !== "number" || !Number.isSafeInteger(account) || account < 1) return MCP_MSG.accountInvalid;
  return createCaller({ ...ctx, accountParam: String(account) });
}

async function callTool(ctx: RequestContext, name: string, args: Json): Promise<CallToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) return failed(`没有这个工具：${name}`);
  const def = procedures[tool.procedure]?._def;
  const caller = callerOf(ctx, tool, args);
  if (typeof caller === "string") return failed(caller);
  // The account is the context's (callerOf): the procedure's own input is the rest.
  const input = tool.account ? Object.fromEntries(Object.entries(args).filter(([k]) => k !== "account")) : args;
  try {
    const answer = (await procedureOf(caller, tool.procedure)(def?.inputs.length ? input : undefined)) as Json;
    if (answer.success === false) return failed(typeof answer.message === "string" ? answer.message : "操作未完成");
    return { content: [{ type: "text", text: JSON.stringify(answer) }], structuredContent: answer };
  } catch (error) {
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR") return failed(error.message);
    logError("mcp", error instanceof TRPCError ? (error.cause ?? error) : error);
    return failed("服务内部错误");
  }
}

const plain = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: message }), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  });

/** Answers one request of the MCP endpoint. */
export async function mcpHandler(req: Request): Promise<Response> {
  // The credential is the Bearer alone: a browser's cookies never reach a tool.
  const headers = new Headers(req.headers);
  headers.delete("cookie");
  const ctx = createRequestContext(new Request(req.url, { headers }), new Headers());
  try {
    await createCaller(ctx).workspace.me();
  } catch (error) {
    if (error instanceof TRPCError && error.code === "UNAUTHORIZED")
      return plain(401, "需要工作区的 API 令牌（Authorization: Bearer gdk_…）", { "WWW-Authenticate": "Bearer" });
    if (error instanceof TRPCError && error.code === "FORBIDDEN") return plain(403, error.message);
    if (error instanceof TRPCError && error.code === "SERVICE_UNAVAILABLE") return plain(503, error.message);
    logError("mcp", error);
    return plain(500, "服务内部错误");
  }
  const server = new Server({ name: "gateway-dashboard", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(ctx, request.params.name, (request.params.arguments ?? {}) as Json),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req);
  } finally {
    await server.close().catch(() => undefined);
  }
}
