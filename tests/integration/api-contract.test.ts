import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createDashboardClient, isUnauthorized } from "../../src/client";
import { setOperatorPassword } from "../../src/server/admin/operator";
import { loginFailureCases } from "../support/cases";
import { siteRegistry } from "../../src/server/sites/registry";
import { ALICE, BOB, startLegacyGateway } from "../support/gateway";
import { ROOT, startApp, type RunningApp } from "../support/server";
import { storeForAnotherServer } from "../support/db";
import { startFixture, type Fixture } from "../support/suite";
import { signInOverHttp } from "../support/http";
import { restEndpoints } from "../../src/server/http/dispatch";
import { writtenPaths } from "../../src/server/http/openapi";

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<
          string,
          { content?: Record<string, { schema: object; examples?: Record<string, { value: unknown }> }> }
        >;
      }
    >
  >;
  components: { schemas: Record<string, object> };
};

let fx: Fixture;
let app: RunningApp;
let limited: RunningApp;
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  fx = await startFixture();
  const env = { DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, SITE_TIMEOUT_MS: "1000" };
  const copy = storeForAnotherServer(fx.store);
  [app, limited] = await Promise.all([
    startApp(env),
    startApp({ ...env, DATABASE_URL: copy.url, DATA_DIR: copy.dir, LOGIN_RATE_LIMIT: "1" }),
  ]);
  const res = await fetch(`${app.url}/api/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
  ajv.addSchema({ $id: "doc", components: doc.components });
});
afterAll(async () => {
  await Promise.all([app?.stop(), limited?.stop()]);
  await fx?.close();
});

/** Checks a live answer against the document's schema for that route and status. */
async function conforms(
  res: Response,
  route: string,
  method: string,
  status: number,
): Promise<Record<string, unknown>> {
  expect(res.status, `${method} ${route}`).toBe(status);
  const body = (await res.json()) as Record<string, unknown>;
  const response = doc.paths[route]?.[method]?.responses[String(res.status)];
  expect(response, `${method} ${route} documents ${res.status}`).toBeDefined();
  const schema = response?.content?.["application/json"]?.schema;
  expect(schema).toBeDefined();
  // Point the document's $refs at the registered components.
  const validate = ajv.compile(
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components', '"doc#/components')) as object,
  );
  const valid = validate(body);
  expect(valid, `${method} ${route} ${res.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`).toBe(
    true,
  );
  return body;
}

const post = (base: string, route: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("GET /api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((doc as unknown as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("documents every endpoint the server declares, and no other", () => {
    const declared = restEndpoints().map((e) => `${e.route.method} ${e.route.path.replace("{path...}", "{path}")}`);
    const documented = Object.entries(doc.paths).flatMap(([route, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${route}`),
    );
    expect(new Set(documented)).toEqual(new Set(declared));
    expect(documented.length).toBe(declared.length);
  });

  it("takes each endpoint's parameters and body from its procedure's input, never written twice", () => {
    type Op = {
      parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }>;
      requestBody?: unknown;
    };
    const ops = doc.paths as unknown as Record<string, Record<string, Op>>;
    const written = writtenPaths();
    const twice: string[] = [];
    for (const e of restEndpoints()) {
      const method = e.route.method.toLowerCase();
      const generated = ops[e.route.path]?.[method];
      const own = written[e.route.path]?.[method];
      if (e.route.shape || !generated || !own) continue;
      // A file writes no parameter the input says (only the workspace's `account` choice, which
      // no input carries), and a body only where none is generated (the sign-in's own parsing).
      const ownParams = (own.parameters as Array<{ name: string }> | undefined) ?? [];
      const ownBody = own.requestBody && JSON.stringify(own.requestBody) !== JSON.stringify(generated.requestBody);
      const served = (generated.parameters ?? []).map((p) => `${p.in} ${p.name}`);
      if (ownParams.some((p) => p.name !== "account") || ownBody || new Set(served).size !== served.length)
        twice.push(`${e.route.method} ${e.route.path}`);
    }
    expect(twice).toEqual([]);
    // Limits the server checks show where they were missing (items of a token's lists, a rule's channels).
    const tokenBody = (ops["/api/account/tokens"]?.post?.requestBody ?? {}) as {
      content: { "application/json": { schema: { properties: Record<string, { items?: { maxLength?: number } }> } } };
    };
    const fields = tokenBody.content["application/json"].schema.properties;
    expect(fields.models?.items?.maxLength).toBeGreaterThan(0);
    expect(fields.allowIps?.items?.maxLength).toBeGreaterThan(0);
    const ruleBody = JSON.stringify(ops["/api/alerts/rules"]?.post?.requestBody);
    expect(ruleBody).toContain('"maxItems":20');
    // A page is the integer it becomes, with its bounds and meaning.
    const page = ops["/api/account/logs"]?.get?.parameters?.find((p) => p.name === "page");
    expect(page?.schema).toEqual({ type: "integer", minimum: 1, maximum: 10_000 });
    expect(page).toMatchObject({
      in: "query",
      required: false,
      description: expect.stringContaining("页码") as unknown,
    });
  });

  it("documents an endpoint from its declaration alone: summary, who may call it, parameters, answer", () => {
    type Op = {
      operationId: string;
      summary?: string;
      security: object[];
      parameters?: Array<{ name: string; in: string }>;
      responses: Record<string, { content?: Record<string, { schema: { oneOf?: object[] } }> }>;
    };
    const ops = doc.paths as unknown as Record<string, Record<string, Op>>;
    // Every operation says what it does.
    for (const [route, methods] of Object.entries(ops))
      for (const [method, op] of Object.entries(methods)) expect(op.summary, `${method} ${route}`).toBeTruthy();
    // Written nowhere but on its procedure.
    expect(writtenPaths()["/api/workspace/totp"]).toBeUndefined();
    const status = ops["/api/workspace/totp"]?.get;
    expect(status).toMatchObject({ operationId: "workspaceTotpStatus", summary: "两步验证状态" });
    expect(status?.security).toEqual([{ bearerAuth: [] }, { workspaceCookieAuth: [] }]);
    const answer = JSON.stringify(status?.responses["200"]?.content?.["application/json"]?.schema.oneOf?.[0]);
    expect(answer).toContain('"enabled":{"type":"boolean"}');
    expect(answer).toContain('"recoveryLeft":{"type":"integer"');
    const revoke = ops["/api/workspace/devices/{id}"]?.delete;
    expect(revoke?.parameters).toEqual([expect.objectContaining({ name: "id", in: "path", required: true })]);
    expect(revoke?.responses["403"]).toBeDefined();
  });

  it("answers a path no endpoint has 404, and a method its endpoint lacks 405, in words", async () => {
    const none = await fetch(`${app.url}/api/no/such/endpoint`);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ success: false, message: "没有这个接口" });
    // `tokens/delete` is a path of its own (POST), not a token id of `tokens/{id}`.
    const wrong = await fetch(`${app.url}/api/account/tokens/delete`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(await wrong.json()).toEqual({ success: false, message: "这个接口不支持该请求方法，可用: POST" });
    // A trailing slash names the same endpoint.
    const me = await fetch(`${app.url}/api/auth/me/`);
    expect(me.status).toBe(401);
  });

  it("enumerates every failure message of our own as an example", () => {
    const examples = JSON.stringify(doc.paths);
    const ours = loginFailureCases
      .map((c) => c.message)
      .filter((m) => !m.startsWith("无权") && m !== "用户已被封禁" && !m.startsWith("数据库出错"));
    for (const message of new Set([
      ...ours,
      "未登录或登录已过期",
      "非法的请求来源",
      "请求体过大",
      "登录尝试过于频繁，请稍后再试",
    ])) {
      expect(examples, message).toContain(JSON.stringify(message));
    }
  });

  it("matches real answers of the running server", async () => {
    for (const c of loginFailureCases) {
      await conforms(await post(app.url, "/api/auth/login", c.body(fx.sites)), "/api/auth/login", "post", 200);
    }
    const ok = await post(app.url, "/api/auth/login", {
      userId: ALICE.id,
      accessToken: ALICE.token,
      siteId: fx.sites.strict,
    });
    const login = await conforms(ok, "/api/auth/login", "post", 200);
    const token = (login.data as { sessionToken: string }).sessionToken;
    const cookie = (ok.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const auth = { authorization: `Bearer ${token}` };

    await conforms(await fetch(`${app.url}/api/auth/me`, { headers: auth }), "/api/auth/me", "get", 200);
    await conforms(await fetch(`${app.url}/api/auth/me`), "/api/auth/me", "get", 401);
    await conforms(
      await post(app.url, "/api/auth/login", JSON.stringify({ pad: "x".repeat(70_000) })),
      "/api/auth/login",
      "post",
      413,
    );
    await post(limited.url, "/api/auth/login", {});
    await conforms(await post(limited.url, "/api/auth/login", {}), "/api/auth/login", "post", 429);
    await conforms(
      await post(app.url, "/api/auth/logout", "", { cookie, origin: "http://evil.example" }),
      "/api/auth/logout",
      "post",
      403,
    );
    await conforms(
      await post(app.url, "/api/auth/login", { userId: 1 }, { origin: "http://evil.example" }),
      "/api/auth/login",
      "post",
      403,
    );
    await conforms(await post(app.url, "/api/auth/logout", "", auth), "/api/auth/logout", "post", 200);
    await conforms(await post(app.url, "/api/auth/logout", "", auth), "/api/auth/logout", "post", 401);

    // me without site, once the site is gone.
    const gone = await fx.store.db.site.create({ data: { name: "临时", url: fx.legacy.url } });
    const other = (await (
      await post(app.url, "/api/auth/login", { userId: BOB.id, accessToken: BOB.token, siteId: gone.id })
    ).json()) as {
      data: { sessionToken: string };
    };
    await fx.store.db.site.delete({ where: { id: gone.id } });
    const headers = { authorization: `Bearer ${other.data.sessionToken}` };
    const me = await conforms(await fetch(`${app.url}/api/auth/me`, { headers }), "/api/auth/me", "get", 200);
    expect(me.data).not.toHaveProperty("site");
  });
});

describe("the typed client", () => {
  it("signs in, reads me, lists sessions and signs out", async () => {
    const client = createDashboardClient({ baseUrl: `${app.url}/` });
    const failed = await client.login({ userId: BOB.id, accessToken: ALICE.token, siteId: fx.sites.legacy });
    expect(failed).toEqual({ success: false, message: "用户ID与令牌不匹配" });
    expect(client.sessionToken).toBeUndefined();

    const result = await client.login({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.legacy });
    expect(result.success).toBe(true);
    const me = await client.me();
    expect(me.data.userInfo.id).toBe(ALICE.id);
    expect(me.data.site?.id).toBe(fx.sites.legacy);
    expect((await client.sessions.list()).some((s) => s.current)).toBe(true);

    const resumed = createDashboardClient({ baseUrl: app.url, sessionToken: client.sessionToken });
    expect((await resumed.me()).data.userInfo.id).toBe(ALICE.id);

    expect(await client.logout()).toEqual({ success: true });
    const error: unknown = await resumed.me().catch((e: unknown) => e);
    expect(isUnauthorized(error)).toBe(true);
  });

  it("runs the example script end to end", async () => {
    // Asynchronously: the gateway stand-in lives in this process and must keep answering.
    const res = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "examples/sign-in.ts"],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DASHBOARD_URL: app.url,
          SITE_ID: String(fx.sites.strict),
          USER_ID: String(ALICE.id),
          ACCESS_TOKEN: ALICE.token,
        },
        encoding: "utf8",
        timeout: 30_000,
      },
    );
    expect(res.stderr.replace(/npm warn[^\n]*\n/g, "")).toBe("");
    expect(res.stdout).toContain("已登录 严格站点，用户 101");
    expect(res.stdout).toContain("当前用户: 爱丽丝，站点: 严格站点");
    expect(res.stdout).toContain("剩余额度: 25000000（约 $50.00）");
    expect(res.stdout).toContain("已退出登录，会话已失效");
  });
});

describe("the site-data routes", () => {
  it("answer as documented: success, a bad parameter, a site failure, and 401", async () => {
    const { token } = await signInOverHttp(app.url, {
      userId: ALICE.id,
      accessToken: ALICE.token,
      siteId: fx.sites.strict,
    });
    const auth = { authorization: `Bearer ${token}` };
    for (const route of [
      "/api/account/summary",
      "/api/account/logs",
      "/api/account/tokens",
      "/api/account/topups",
      "/api/accounts/overview",
    ]) {
      const ok = await conforms(await fetch(`${app.url}${route}`, { headers: auth }), route, "get", 200);
      expect(ok.success, route).toBe(true);
      const bad = await conforms(await fetch(`${app.url}${route}?refresh=maybe`, { headers: auth }), route, "get", 200);
      expect(bad).toEqual({ success: false, message: "刷新参数无效（参数 refresh）" });
      await conforms(await fetch(`${app.url}${route}`), route, "get", 401);
    }
    // A site that went away after the sign-in (moving it would end the session instead).
    const gone = await startLegacyGateway();
    const goneSite = await siteRegistry(fx.store.db).add({ name: "将关闭的站点", url: gone.url });
    const unreachable = await signInOverHttp(app.url, {
      userId: ALICE.id,
      accessToken: ALICE.token,
      siteId: goneSite.id,
    });
    await gone.close();
    const failed = await conforms(
      await fetch(`${app.url}/api/account/logs`, { headers: { authorization: `Bearer ${unreachable.token}` } }),
      "/api/account/logs",
      "get",
      200,
    );
    expect(failed).toEqual({ success: false, message: "站点请求失败: 连接被拒绝" });
  });
});

describe("the usage ledger routes", () => {
  it("answer as documented", async () => {
    const { token } = await signInOverHttp(app.url, {
      userId: BOB.id,
      accessToken: BOB.token,
      siteId: fx.sites.strict,
    });
    const auth = { authorization: `Bearer ${token}` };
    const started = await conforms(
      await fetch(`${app.url}/api/usage/sync`, { method: "POST", headers: auth }),
      "/api/usage/sync",
      "post",
      200,
    );
    expect(started.success).toBe(true);
    const status = await conforms(
      await fetch(`${app.url}/api/usage/status`, { headers: auth }),
      "/api/usage/status",
      "get",
      200,
    );
    expect(status.success).toBe(true);
    await conforms(await fetch(`${app.url}/api/usage/status`), "/api/usage/status", "get", 401);
    for (const query of [
      "",
      "?groupBy=model&accounts=all&tz=Asia/Shanghai",
      "?groupBy=day&split=model&from=2026-10-01",
    ]) {
      const summary = await conforms(
        await fetch(`${app.url}/api/usage/summary${query}`, { headers: auth }),
        "/api/usage/summary",
        "get",
        200,
      );
      expect(summary.success, query).toBe(true);
    }
    const bad = await conforms(
      await fetch(`${app.url}/api/usage/summary?from=2026-02-30`, { headers: auth }),
      "/api/usage/summary",
      "get",
      200,
    );
    expect(bad).toEqual({ success: false, message: "开始日期无效（参数 from）" });
    const balance = await conforms(
      await fetch(`${app.url}/api/usage/balance?from=2026-11-01&to=2026-11-20`, { headers: auth }),
      "/api/usage/balance",
      "get",
      200,
    );
    expect(balance.success).toBe(true);
    await conforms(await fetch(`${app.url}/api/usage/balance`), "/api/usage/balance", "get", 401);

    // Exports: the count as JSON, the files with their types, a bad parameter as the JSON failure.
    const count = await conforms(
      await fetch(`${app.url}/api/export/count?type=consume`, { headers: auth }),
      "/api/export/count",
      "get",
      200,
    );
    expect(count.success).toBe(true);
    const csv = await fetch(`${app.url}/api/export/usage.csv?from=2026-11-01&to=2026-11-20&tz=UTC`, { headers: auth });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(
      `attachment; filename="usage_2026-11-01_2026-11-20.csv"; filename*=UTF-8''usage_2026-11-01_2026-11-20.csv`,
    );
    expect(new Uint8Array(await csv.arrayBuffer()).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
    const pdf = await fetch(`${app.url}/api/export/statement.pdf?month=2026-11`, { headers: auth });
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");
    for (const [route, query, message] of [
      ["/api/export/usage.csv", "from=2026-11-05&to=2026-11-01", "结束日期不能早于开始日期（参数 to）"],
      ["/api/export/statement.pdf", "month=2026-13", "月份无效（参数 month）"],
    ] as const) {
      const bad = await conforms(await fetch(`${app.url}${route}?${query}`, { headers: auth }), route, "get", 200);
      expect(bad).toEqual({ success: false, message });
      await conforms(await fetch(`${app.url}${route}?${query}`), route, "get", 401);
    }
  });
});

describe("the operator's routes", () => {
  it("answer as documented", async () => {
    const password = "operator password for the contract";
    await setOperatorPassword(fx.store.db, password);
    const wrong = await conforms(
      await post(app.url, "/api/admin/login", { password: "not the password" }),
      "/api/admin/login",
      "post",
      401,
    );
    expect(wrong).toEqual({ success: false, message: "管理员密码错误" });
    const ok = await conforms(await post(app.url, "/api/admin/login", { password }), "/api/admin/login", "post", 200);
    const token = (ok.data as { token: string }).token;
    const audit = await conforms(
      await fetch(`${app.url}/api/admin/audit`, { headers: { authorization: `Bearer ${token}` } }),
      "/api/admin/audit",
      "get",
      200,
    );
    expect((audit.data as { entries: Array<{ action: string }> }).entries.map((e) => e.action).slice(0, 2)).toEqual([
      "signIn",
      "signInFailed",
    ]);
    const filtered = await conforms(
      await fetch(`${app.url}/api/admin/audit?actions=signInFailed&limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      }),
      "/api/admin/audit",
      "get",
      200,
    );
    expect((filtered.data as { entries: Array<{ action: string; count: number }> }).entries).toMatchObject([
      { action: "signInFailed", count: 1 },
    ]);
    expect(
      await conforms(
        await fetch(`${app.url}/api/admin/audit?limit=9999`, { headers: { authorization: `Bearer ${token}` } }),
        "/api/admin/audit",
        "get",
        200,
      ),
    ).toEqual({ success: false, message: "每页条数超出范围（参数 limit）" });
    const admin = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const listed = await conforms(
      await fetch(`${app.url}/api/admin/sites`, { headers: admin }),
      "/api/admin/sites",
      "get",
      200,
    );
    expect(listed.success).toBe(true);
    // A gateway of its own: an address is one site.
    const own = await startLegacyGateway();
    onTestFinished(() => own.close());
    const added = await conforms(
      await post(app.url, "/api/admin/sites", { name: "契约站点", url: own.url }, admin),
      "/api/admin/sites",
      "post",
      200,
    );
    const id = (added.data as { site: { id: number } }).site.id;
    const edited = await conforms(
      await fetch(`${app.url}/api/admin/sites/${id}`, {
        method: "PATCH",
        headers: admin,
        body: JSON.stringify({ name: "契约站点（改）", requestsPerMinute: 10 }),
      }),
      "/api/admin/sites/{id}",
      "patch",
      200,
    );
    expect(edited.data).toMatchObject({ site: { name: "契约站点（改）", requestsPerMinute: 10 } });
    const probed = await conforms(
      await fetch(`${app.url}/api/admin/sites/${id}/probe`, { method: "POST", headers: admin }),
      "/api/admin/sites/{id}/probe",
      "post",
      200,
    );
    expect(probed.success).toBe(true);
    const asked = await conforms(
      await fetch(`${app.url}/api/admin/sites/${id}`, { method: "DELETE", headers: admin }),
      "/api/admin/sites/{id}",
      "delete",
      200,
    );
    expect(asked).toEqual({ success: true, data: { removed: false, liveSessions: 0 } });
    const removed = await conforms(
      await fetch(`${app.url}/api/admin/sites/${id}?confirm=1`, { method: "DELETE", headers: admin }),
      "/api/admin/sites/{id}",
      "delete",
      200,
    );
    expect(removed).toEqual({ success: true, data: { removed: true, liveSessions: 0 } });
    await conforms(await fetch(`${app.url}/api/admin/sites`), "/api/admin/sites", "get", 401);
    await conforms(
      await fetch(`${app.url}/api/admin/logout`, { method: "POST", headers: { authorization: `Bearer ${token}` } }),
      "/api/admin/logout",
      "post",
      200,
    );
    await conforms(
      await fetch(`${app.url}/api/admin/audit`, { headers: { authorization: `Bearer ${token}` } }),
      "/api/admin/audit",
      "get",
      401,
    );
  });
});

describe("the workspace routes", () => {
  it("match the document: create, sign in, save an account, read it with ?account=, devices, tokens, sign out", async () => {
    const made = await conforms(
      await post(app.url, "/api/workspace/register", { name: "契约工作区", password: "correct horse battery" }),
      "/api/workspace/register",
      "post",
      200,
    );
    expect(made.success).toBe(true);
    const bad = await conforms(
      await post(app.url, "/api/workspace/register", { name: "契约工作区", password: "short" }),
      "/api/workspace/register",
      "post",
      200,
    );
    expect(bad).toEqual({ success: false, message: "密码至少需要 12 个字符" });
    await conforms(
      await post(app.url, "/api/workspace/login", { name: "契约工作区", password: "wrong password!!" }),
      "/api/workspace/login",
      "post",
      401,
    );
    const signedIn = await post(app.url, "/api/workspace/login", {
      name: "契约工作区",
      password: "correct horse battery",
    });
    expect(signedIn.headers.get("set-cookie")).toMatch(/^gd_workspace=gdw_[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    const token = ((await conforms(signedIn, "/api/workspace/login", "post", 200)).data as { token: string }).token;
    const auth = { authorization: `Bearer ${token}` };
    const get = (route: string) => fetch(`${app.url}${route}`, { headers: auth });

    await conforms(await fetch(`${app.url}/api/workspace/accounts`), "/api/workspace/accounts", "get", 401);
    await conforms(await get("/api/account/summary"), "/api/account/summary", "get", 404);
    const refused = await conforms(
      await post(
        app.url,
        "/api/workspace/accounts",
        { siteId: fx.sites.strict, userId: ALICE.id, accessToken: "sk-nope" },
        auth,
      ),
      "/api/workspace/accounts",
      "post",
      200,
    );
    expect(refused.success).toBe(false);
    const saved = await conforms(
      await post(
        app.url,
        "/api/workspace/accounts",
        { siteId: fx.sites.strict, userId: ALICE.id, accessToken: ALICE.token, alias: "契约" },
        auth,
      ),
      "/api/workspace/accounts",
      "post",
      200,
    );
    const id = (saved.data as { account: { id: number } }).account.id;
    await conforms(await get("/api/workspace/accounts"), "/api/workspace/accounts", "get", 200);
    await conforms(await get("/api/workspace/me"), "/api/workspace/me", "get", 200);
    const summary = await conforms(await get(`/api/account/summary?account=${id}`), "/api/account/summary", "get", 200);
    expect(summary.success).toBe(true);
    await conforms(await get(`/api/account/summary?account=${id + 1000}`), "/api/account/summary", "get", 404);
    await conforms(await get("/api/accounts/overview"), "/api/accounts/overview", "get", 200);
    await conforms(await get(`/api/usage/status?account=${id}`), "/api/usage/status", "get", 200);
    const patched = await conforms(
      await fetch(`${app.url}/api/workspace/accounts/${id}`, {
        method: "PATCH",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ tags: ["契约"], pinned: true }),
      }),
      "/api/workspace/accounts/{id}",
      "patch",
      200,
    );
    expect(patched.data).toMatchObject({ account: { tags: ["契约"], pinned: true } });
    await conforms(
      await fetch(`${app.url}/api/workspace/accounts/${id + 1000}`, { method: "DELETE", headers: auth }),
      "/api/workspace/accounts/{id}",
      "delete",
      404,
    );
    await conforms(await get("/api/workspace/devices"), "/api/workspace/devices", "get", 200);
    await conforms(await get("/api/workspace/totp"), "/api/workspace/totp", "get", 200);
    const created = await conforms(
      await post(app.url, "/api/workspace/tokens", { name: "脚本", access: "read" }, auth),
      "/api/workspace/tokens",
      "post",
      200,
    );
    const readToken = (created.data as { token: string }).token;
    await conforms(
      await post(
        app.url,
        "/api/workspace/accounts",
        { siteId: fx.sites.strict, userId: BOB.id, accessToken: BOB.token },
        {
          authorization: `Bearer ${readToken}`,
        },
      ),
      "/api/workspace/accounts",
      "post",
      403,
    );
    await conforms(await get("/api/workspace/tokens"), "/api/workspace/tokens", "get", 200);
    // A backup file larger than any other body (the demo sites are not registered here: listed, not dropped).
    const padded = {
      version: "2.0",
      timestamp: Date.now(),
      accounts: {
        accounts: Array.from({ length: 150 }, (_, i) => ({
          id: `a${i}`,
          site_name: `外站 ${i}`,
          site_url: `https://elsewhere-${i}.example.com`,
          authType: "access_token",
          account_info: { id: i + 1, access_token: `sk-elsewhere-${i}-0000000000` },
          notes: "x".repeat(600),
        })),
      },
    };
    expect(JSON.stringify(padded).length).toBeGreaterThan(64 * 1024);
    const imported = await conforms(
      await post(app.url, "/api/workspace/import", padded, auth),
      "/api/workspace/import",
      "post",
      200,
    );
    expect(
      (imported.data as { outcomes: { result: string }[] }).outcomes.every((o) => o.result === "unregistered"),
    ).toBe(true);
    const exported = await fetch(`${app.url}/api/workspace/accounts/export?format=csv`, { headers: auth });
    expect(exported.headers.get("content-disposition")).toMatch(
      /^attachment; filename="accounts_\d{4}-\d{2}-\d{2}\.csv"/,
    );
    expect(await exported.text()).not.toContain(ALICE.token);
    const removed = await conforms(
      await fetch(`${app.url}/api/workspace/accounts/${id}?ledger=1`, { method: "DELETE", headers: auth }),
      "/api/workspace/accounts/{id}",
      "delete",
      200,
    );
    expect(removed.data).toMatchObject({ ledgerDeleted: true });
    await conforms(await post(app.url, "/api/workspace/logout", {}, auth), "/api/workspace/logout", "post", 200);
    await conforms(await get("/api/workspace/me"), "/api/workspace/me", "get", 401);
  });
});
