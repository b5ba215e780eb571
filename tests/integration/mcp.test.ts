import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  newApiUser,
  startGateway,
  type GatewayUser,
  type RunningGateway,
  type StandInLog,
} from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { apiTokenOverHttp, request, workspaceOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * The MCP endpoint (docs/design.md 26) with the SDK's own client: the tools listed with their
 * procedures' schemas, an agent's questions answered from the workspace (which account is
 * cheapest for a model, with what its usage would cost there), a read token that reads and cannot
 * check in, a refused token, and an account of another workspace not found.
 */

const NOW = Math.floor(Date.now() / 1000);

/** A claude-sonnet-4 call on the dear site: (prompt + completion × 5) × 1.5 × 0.9 quota. */
const call = (at: number, prompt: number, completion: number): StandInLog => ({
  createdAt: at,
  type: 2,
  model: "claude-sonnet-4",
  tokenName: "默认",
  tokenId: 1,
  quota: Math.round((prompt + completion * 5) * 1.5 * 0.9),
  promptTokens: prompt,
  completionTokens: completion,
  durationMs: 800,
  stream: false,
  content: "",
});

const DEAR: GatewayUser = {
  accessToken: "sk-mcp-dear-0123456789abcdef",
  data: newApiUser(31, { username: "dear", group: "vip" }),
  models: ["claude-sonnet-4"],
  logs: [call(NOW - 7200, 100_000, 20_000), call(NOW - 3600, 400_000, 80_000)],
};
const CHEAP: GatewayUser = {
  accessToken: "sk-mcp-cheap-0123456789abcdef",
  data: newApiUser(32, { username: "cheap", group: "default" }),
  models: ["claude-sonnet-4"],
  logs: [],
};
const OTHER: GatewayUser = {
  accessToken: "sk-mcp-other-0123456789abcdef",
  data: newApiUser(33, { username: "other", group: "default" }),
  models: ["claude-sonnet-4"],
  logs: [],
};

let store: TempDb;
let app: RunningApp;
const sites: RunningGateway[] = [];
let read = "";
let write = "";
let sync = "";
let otherAccount = 0;
let dearAccount = 0;
let cheapAccount = 0;

async function saveAccount(token: string, siteId: number, user: GatewayUser): Promise<number> {
  const saved = await request(app.url, "/api/workspace/accounts", {
    body: { siteId, userId: Number(user.data.id), accessToken: user.accessToken },
    headers: { authorization: `Bearer ${token}` },
  });
  const data = saved.body.data as { account?: { id: number } } | undefined;
  if (!data?.account) throw new Error(String(saved.body.message));
  return data.account.id;
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

beforeAll(async () => {
  store = await tempStore();
  sites.push(
    await startGateway({
      family: "new-api",
      users: [DEAR],
      status: { checkin_enabled: true },
      pricing: {
        data: [
          {
            model_name: "claude-sonnet-4",
            quota_type: 0,
            model_ratio: 1.5,
            completion_ratio: 5,
            enable_groups: ["vip"],
          },
        ],
        groupRatios: { default: 1, vip: 0.9 },
      },
    }),
    await startGateway({
      family: "new-api",
      users: [CHEAP, OTHER],
      pricing: {
        data: [
          {
            model_name: "claude-sonnet-4",
            quota_type: 0,
            model_ratio: 1.2,
            completion_ratio: 5,
            enable_groups: ["default"],
          },
        ],
        groupRatios: { default: 1 },
      },
    }),
  );
  const registry = siteRegistry(store.db);
  const dearSite = (await registry.add({ name: "贵站", url: sites[0]!.url })).id;
  const cheapSite = (await registry.add({ name: "便宜站", url: sites[1]!.url })).id;
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SITE_TIMEOUT_MS: "2000",
    LOGIN_RATE_LIMIT: "0",
    TRUST_PROXY: "127.0.0.1",
  });
  const token = await workspaceOverHttp(app.url, "智能体工作区");
  const dear = await saveAccount(token, dearSite, DEAR);
  dearAccount = dear;
  cheapAccount = await saveAccount(token, cheapSite, CHEAP);
  // The dear account's usage in the ledger (its first sync), for what it would cost elsewhere.
  await request(app.url, `/api/usage/sync?account=${dear}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  read = await apiTokenOverHttp(app.url, token, "read");
  write = await apiTokenOverHttp(app.url, token, "write");
  sync = await apiTokenOverHttp(app.url, token, "sync");
  const other = await workspaceOverHttp(app.url, "别人的工作区");
  otherAccount = await saveAccount(other, cheapSite, OTHER);
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await Promise.all(sites.map((s) => s.close()));
  await store?.cleanup();
});

type Row = {
  siteName: string;
  cheapest: boolean;
  usable: boolean;
  inputPerMillionUsd: number;
  usageUsd: number | null;
};
type Cheapest = { success: true; data: { model: string; usage: { requests: number } | null; rows: Row[] } };

describe("/api/mcp", () => {
  it("lists its tools with their procedures' schemas", async () => {
    const client = await connect(read);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "list_accounts",
      "usage_summary",
      "cheapest_account",
      "income",
      "plans",
      "usage_cache",
      "fastest_site",
      "charge_check",
      "open_alerts",
      "recent_logs",
      "checkin",
    ]);
    const cheapest = tools.find((t) => t.name === "cheapest_account")!;
    expect(cheapest.inputSchema.required).toEqual(["model"]);
    expect(cheapest.outputSchema?.type).toBe("object");
    expect(tools.find((t) => t.name === "recent_logs")!.inputSchema.properties).toHaveProperty("account");
    await client.close();
  });

  it("answers which account is cheapest for claude-sonnet-4, with what the usage would cost there", async () => {
    const client = await connect(read);
    let answer: Cheapest | undefined;
    // The dear account's first sync runs in the background: its usage shows once it is in the ledger.
    for (let i = 0; i < 40; i++) {
      const result = await client.callTool({ name: "cheapest_account", arguments: { model: "claude-sonnet-4" } });
      expect(result.isError).toBeFalsy();
      answer = result.structuredContent as Cheapest;
      if (answer.data.usage) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const { rows, usage } = answer!.data;
    // 1.2 × $2 at the cheap site's default group against 1.5 × 0.9 × $2 at the dear site's vip.
    expect(rows.map((r) => [r.siteName, r.cheapest, r.inputPerMillionUsd])).toEqual([
      ["便宜站", true, 2.4],
      ["贵站", false, 2.7],
    ]);
    expect(usage?.requests).toBe(2);
    // 500,000 input and 100,000 output tokens: $1.2 + $1.2 there, $1.35 + $1.35 here.
    expect(rows.map((r) => r.usageUsd)).toEqual([2.4, 2.7]);
    await client.close();
  });

  it("suggests the models known for a name no account offers (claude → claude-sonnet-4)", async () => {
    const client = await connect(read);
    const result = await client.callTool({ name: "cheapest_account", arguments: { model: "Claude" } });
    expect(result.isError).toBeFalsy();
    const { rows, suggestions } = (result.structuredContent as { data: { rows: unknown[]; suggestions: string[] } })
      .data;
    expect(rows).toEqual([]);
    expect(suggestions).toContain("claude-sonnet-4");
    expect(suggestions.every((m) => m.toLowerCase().includes("claude"))).toBe(true);
    await client.close();
  });

  it("lists the accounts with balance and days left, and reads a log", async () => {
    const client = await connect(read);
    const accounts = await client.callTool({ name: "list_accounts", arguments: {} });
    const data = (accounts.structuredContent as { data: { rows: { username?: string; daysLeft: unknown }[] } }).data;
    expect(data.rows).toHaveLength(2);
    expect(data.rows[0]).toHaveProperty("daysLeft");
    const logs = await client.callTool({ name: "recent_logs", arguments: { page: 1, pageSize: 5 } });
    expect(logs.isError).toBeFalsy();
    await client.close();
  });

  it("checks in only with a read-write token, and never finds another workspace's account", async () => {
    const reader = await connect(read);
    const refused = await reader.callTool({ name: "checkin", arguments: { account: dearAccount } });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "该 API 令牌只读，不能修改工作区" }],
    });
    const foreign = await reader.callTool({ name: "recent_logs", arguments: { account: otherAccount } });
    expect(foreign).toMatchObject({ isError: true, content: [{ type: "text", text: "工作区中没有这个账户" }] });
    await reader.close();
    const writer = await connect(write);
    // A write names its account, and acts on exactly that one or refuses.
    const unnamed = await writer.callTool({ name: "checkin", arguments: {} });
    expect(unnamed.isError).toBe(true);
    expect(JSON.stringify(unnamed.content)).toContain("请填写 account");
    for (const account of [otherAccount, 999_999]) {
      expect(await writer.callTool({ name: "checkin", arguments: { account } })).toMatchObject({
        isError: true,
        content: [{ type: "text", text: "工作区中没有这个账户" }],
      });
    }
    expect(await writer.callTool({ name: "checkin", arguments: { account: "1" } })).toMatchObject({ isError: true });
    // The cheap account's site has no check-in: said so for it, not done on the first account.
    const cheap = await writer.callTool({ name: "checkin", arguments: { account: cheapAccount } });
    expect(JSON.stringify(cheap)).not.toContain('"state":"done"');
    const done = await writer.callTool({ name: "checkin", arguments: { account: dearAccount } });
    expect(done.isError).toBeFalsy();
    expect((done.structuredContent as { data: { state: string } }).data.state).toBe("done");
    const records = await writer.callTool({ name: "recent_logs", arguments: { account: cheapAccount } });
    expect(records.isError).toBeFalsy();
    await writer.close();
  });

  it("refuses a wrong token and a sync credential before any tool", async () => {
    await expect(connect("gdk_not-a-token-at-all-0000000000000000000000")).rejects.toThrow();
    await expect(connect(sync)).rejects.toThrow();
    const res = await fetch(`${app.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
  });
});
