import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parse } from "csv-parse/sync";
import { ALICE, BOB, FAULT } from "../support/gateway";
import {
  E2E_ADMIN_PASSWORD,
  EMPTY_URL,
  FAMILIES,
  SITES,
  URL_,
  activeAccount,
  expect,
  fillSignIn,
  shot,
  test,
} from "./fixtures";

test.beforeEach(async ({ page, consoleErrors }) => {
  void consoleErrors;
  await page.goto(URL_);
});

test("shows the sign-in page to a visitor, with every registered site", async ({ page }) => {
  await expect(page.getByRole("heading", { name: "登录网关站点" })).toBeVisible();
  const options = page.getByLabel("站点").locator("option");
  await expect(options).toHaveText([
    "严格站点",
    "旧版站点",
    "失联站点",
    "即将移除的站点",
    ...FAMILIES.map((f) => `${f.family} 站点`),
    "操作测试站点",
    "令牌测试站点",
    "套餐站点",
  ]);
  await page.getByLabel("站点").selectOption({ label: "旧版站点" });
  await expect(page.locator(".hint")).toHaveText(/^http:\/\/127\.0\.0\.1:\d+$/);
  await expect(page.getByLabel("访问令牌", { exact: true })).toHaveAttribute("type", "password");
  await shot(page, "01-sign-in");
});

test("pages are served with a nonce-based CSP and the hardening headers", async ({ page, consoleErrors }) => {
  for (const path of ["/", "/no-such-page"]) {
    const res = await page.goto(`${URL_}${path}`);
    const headers = res?.headers() ?? {};
    expect(headers["content-security-policy"]).toMatch(
      /script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}' 'strict-dynamic'/,
    );
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    // Every script of the page carries the nonce (the console fixture fails on any CSP violation).
    const nonce = /'nonce-([^']+)'/.exec(headers["content-security-policy"] ?? "")?.[1];
    const scripts = await page.locator("script").evaluateAll((els) => els.map((e) => (e as HTMLScriptElement).nonce));
    expect(scripts.length).toBeGreaterThan(0);
    expect(new Set(scripts)).toEqual(new Set([nonce]));
  }
  // The unknown page's 404 is the only console error so far.
  expect(consoleErrors).toEqual([
    `Failed to load resource: the server responded with a status of 404 (Not Found) (${URL_}/no-such-page)`,
  ]);
  consoleErrors.length = 0;
  // Markup injected as an HTML injection would (an inline handler) does not run.
  await page.goto(URL_);
  const outcome = await page.evaluate(async () => {
    const violated = new Promise<string>((resolve) =>
      document.addEventListener("securitypolicyviolation", (e) => resolve(e.violatedDirective), { once: true }),
    );
    const holder = document.createElement("div");
    holder.innerHTML = '<a id="injected" href="#" onclick="window.__injected = true; return false">x</a>';
    document.body.append(holder);
    document.getElementById("injected")?.click();
    const directive = await violated;
    holder.remove();
    return { directive, ran: (window as unknown as { __injected?: boolean }).__injected === true };
  });
  expect(outcome).toEqual({ directive: "script-src-attr", ran: false });
  // That one refusal is the only console error, and it is the CSP's.
  expect(consoleErrors).toHaveLength(1);
  expect(consoleErrors[0]).toMatch(/Content Security Policy/);
  consoleErrors.length = 0;
});

test("signs in, shows the account and quota, survives a reload, and signs out", async ({ page, context }) => {
  await fillSignIn(page, "严格站点", ALICE.id, ALICE.token);
  const answer = page.waitForResponse((r) => r.url().includes("auth.signIn"));
  await page.getByRole("button", { name: "登录" }).click();
  // The browser gets the cookie only: its sign-in answer carries no session token.
  const body = await (await answer).text();
  expect(body).toContain('"success":true');
  expect(body).not.toContain("sessionToken");

  await expect(activeAccount(page)).toContainText("爱丽丝");
  // The landing page is every account at once; the account's own pages are its tabs.
  await expect(page.getByRole("region", { name: "全部账户" })).toBeVisible();
  await page.getByRole("link", { name: "概览", exact: true }).click();
  const account = page.getByRole("region", { name: "账户", exact: true });
  await expect(account).toContainText("alice");
  await expect(account).toContainText(String(ALICE.id));
  await expect(account).toContainText("default");
  await expect(account).toContainText("普通用户");
  await expect(account).toContainText("严格站点");
  await expect(account).toContainText("会话到期");
  const quota = page.getByRole("region", { name: "额度" });
  await expect(quota).toContainText("$50.00"); // 25 000 000 quota
  await expect(quota).toContainText("25,000,000 额度");
  await expect(quota).toContainText("$2.50"); // 1 250 000 used
  await expect(quota).toContainText("42");
  await shot(page, "02-dashboard");

  // The secret is nowhere in the page, the URL or storage.
  expect(await page.content()).not.toContain(ALICE.token);
  expect(page.url()).not.toContain(ALICE.token);
  const storage = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
  expect(storage).not.toContain(ALICE.token);

  await page.reload();
  await expect(activeAccount(page)).toContainText("爱丽丝");

  const cookie = (await context.cookies()).find((c) => c.name === "gd_session");
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe("Lax");

  await page.getByRole("button", { name: "退出当前账户" }).click();
  await expect(page.getByRole("heading", { name: "登录网关站点" })).toBeVisible();
  await shot(page, "03-signed-out");

  // The old cookie no longer opens a session.
  const replay = await page.request.get(`${URL_}/api/auth/me`, { headers: { cookie: `gd_session=${cookie?.value}` } });
  expect(replay.status()).toBe(401);
  expect(await replay.json()).toEqual({ success: false, message: "未登录或登录已过期" });
});

const failures = [
  { name: "mismatch", site: "旧版站点", userId: BOB.id, token: ALICE.token, message: "用户ID与令牌不匹配" },
  {
    name: "bad-token",
    site: "旧版站点",
    userId: ALICE.id,
    token: "sk-wrong",
    message: "无权进行此操作，access token 无效",
  },
  {
    name: "new-api-user",
    site: "严格站点",
    userId: BOB.id,
    token: ALICE.token,
    message: "无权进行此操作，New-Api-User 与登录用户不匹配",
  },
  {
    name: "html",
    site: "旧版站点",
    userId: ALICE.id,
    token: FAULT.html,
    message: "无法连接站点: 站点返回的不是 JSON（HTTP 200）",
  },
  { name: "unreachable", site: "失联站点", userId: ALICE.id, token: ALICE.token, message: "无法连接站点: 连接被拒绝" },
];

for (const f of failures) {
  test(`shows the service's message as it is: ${f.message}`, async ({ page }) => {
    await fillSignIn(page, f.site, f.userId, f.token);
    await page.getByRole("button", { name: "登录" }).click();
    const live = page.locator("[aria-live]").filter({ hasText: f.message });
    await expect(live).toContainText(f.message);
    // The site's English explained beside its words; any other message as it is.
    if (f.message.includes("New-Api-User")) await expect(live).toContainText("请核对用户ID");
    else if (f.message.includes("access token"))
      await expect(live).toContainText("（access token 即站点的系统访问令牌");
    else await expect(live).toHaveText(f.message);
    // The token stays in its field, hidden, to correct the user id without pasting it again; never in the markup.
    await expect(page.getByLabel("访问令牌", { exact: true })).toHaveValue(f.token);
    await expect(page.getByLabel("访问令牌", { exact: true })).toHaveAttribute("type", "password");
    expect(await page.content()).not.toContain(f.token);
    await shot(page, `04-failure-${f.name}`);
  });
}

test("refuses a user id that is not a number before any site is asked, and says where to find both fields", async ({
  page,
}) => {
  let logins = 0;
  page.on("request", (r) => {
    if (r.url().includes("auth.signIn")) logins++;
  });
  await fillSignIn(page, "旧版站点", "alice", ALICE.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page.locator("[aria-live]").filter({ hasText: "用户ID应为数字" })).toBeVisible();
  await expect(page.getByLabel("用户ID")).toBeFocused();
  expect(logins).toBe(0);
  await page.getByText("在哪里找到用户ID和访问令牌？").click();
  await expect(page.getByText("系统访问令牌不是调用模型用的 sk- 开头的 API 密钥", { exact: false })).toBeVisible();
  await shot(page, "04b-sign-in-help");
});

test("shows progress and cannot double-submit while the site is slow", async ({ page }) => {
  let logins = 0;
  page.on("request", (r) => {
    if (r.url().includes("auth.signIn")) logins++;
  });
  await fillSignIn(page, "旧版站点", ALICE.id, FAULT.hang);
  const button = page.getByRole("button", { name: /登录/ });
  await button.click();
  await expect(button).toBeDisabled();
  await expect(button).toHaveText("登录中…");
  await page.getByLabel("用户ID").press("Enter");
  await button.click({ force: true }).catch(() => undefined);
  await expect(page.locator("[aria-live]").filter({ hasText: "连接超时" })).toHaveText("无法连接站点: 连接超时");
  await expect(button).toBeEnabled();
  expect(logins).toBe(1);
});

test("signs in with the keyboard alone", async ({ page }) => {
  // First the skip link, shown while focused; it leads to the page's main region.
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "跳到主要内容" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("站点")).toBeFocused();
  await page.keyboard.press("ArrowDown"); // 旧版站点
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("用户ID")).toBeFocused();
  await page.keyboard.type(String(BOB.id));
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("访问令牌", { exact: true })).toBeFocused();
  await page.keyboard.type(BOB.token);
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "显示" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByLabel("访问令牌", { exact: true })).toHaveAttribute("type", "text");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Enter");
  await expect(activeAccount(page)).toContainText("用户 102");
  // The focus lands on the page, not the body: Tab goes on from its top.
  await expect(page.locator("#main")).toBeFocused();
  // The account menu opens from the keyboard and Esc closes it, the focus back on its button.
  const menu = page.getByRole("region", { name: "账户切换" }).locator("details");
  await menu.locator("summary").focus();
  await page.keyboard.press("Enter");
  await expect(menu).toHaveAttribute("open", "");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Escape");
  await expect(menu).not.toHaveAttribute("open");
  await expect(menu.locator("summary")).toBeFocused();
  await page.getByRole("link", { name: "概览", exact: true }).click();
  await expect(page.getByRole("region", { name: "账户", exact: true })).toContainText("旧版站点");
});

test("notes a removed site, lists sessions, and signs out the other devices", async ({ page, browser }) => {
  await fillSignIn(page, "即将移除的站点", ALICE.id, ALICE.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("爱丽丝");

  // A second device signs in to the same account on the same site.
  const other = await browser.newPage();
  await other.goto(URL_);
  await fillSignIn(other, "即将移除的站点", ALICE.id, ALICE.token);
  await other.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(other)).toContainText("爱丽丝");

  await page.goto(`${URL_}/?tab=overview`);
  const sessions = page.getByRole("region", { name: "登录会话" });
  await expect(sessions.getByRole("listitem")).toHaveCount(2);
  await expect(sessions).toContainText("当前会话");

  // Removing the site leaves the sessions working; the dashboard says the site is gone.
  const { closeDb, createDb } = await import("../../src/server/db/client");
  const db = createDb(process.env.E2E_DB_URL ?? "");
  await db.site.delete({ where: { id: SITES.removable } });
  await closeDb(db);
  await page.reload();
  await expect(page.getByText("登录时所用的站点已被移除")).toBeVisible();
  await shot(page, "05-dashboard-site-removed");

  await sessions.getByRole("button", { name: "退出其他所有会话" }).click();
  await expect(sessions.getByRole("listitem")).toHaveCount(1);
  await expect(sessions).toContainText("已退出其他所有会话");
  await shot(page, "06-sessions");

  await other.reload();
  await expect(other.getByRole("heading", { name: "登录网关站点" })).toBeVisible();
  await other.close();
});

test("tells how to add a site when none is registered", async ({ page }) => {
  await page.goto(EMPTY_URL);
  await expect(page.getByRole("heading", { name: "还没有注册任何站点" })).toBeVisible();
  await expect(page.getByText("npm run sites -- add --name <名称> --url <站点地址>")).toBeVisible();
  await expect(page.getByRole("button", { name: "登录" })).toHaveCount(0);
  await shot(page, "07-no-sites");
});

test("fits a phone screen", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await fillSignIn(page, "旧版站点", BOB.id, BOB.token);
  await page.getByLabel("访问令牌", { exact: true }).press("Enter");
  await expect(activeAccount(page)).toContainText("用户 102");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  expect(overflow).toBe(false);
  await shot(page, "08-phone");
});

const usd = (quota: number) =>
  `$${(quota / 500_000).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const FAMILY_NAMES: Record<string, string> = {
  "new-api": "new-api",
  "new-api-legacy": "new-api（旧版）",
  veloera: "Veloera",
  "one-api": "one-api",
  "one-hub": "one-hub",
  "done-hub": "done-hub",
};

for (const f of FAMILIES) {
  test(`shows a ${f.family} account's live balance, log, tokens and top-ups, each with its own URL`, async ({
    page,
  }) => {
    await fillSignIn(page, `${f.family} 站点`, f.user.id, f.user.token);
    await page.getByRole("button", { name: "登录" }).click();

    // 概览: the live balance and today's spend, the site's family.
    await expect(activeAccount(page)).toContainText(`${f.family} 用户`);
    await page.getByRole("link", { name: "概览", exact: true }).click();
    const quota = page.getByRole("region", { name: "额度" });
    await expect(quota).toContainText(usd(f.totals.quota));
    await expect(quota).toContainText(String(f.totals.requestCount.toLocaleString("zh-CN")));
    await expect(page.getByText(`站点类型：${FAMILY_NAMES[f.family]}`)).toBeVisible();
    if (f.family === "new-api") await shot(page, "10-overview");

    // 使用日志: newest first, 20 a page on every family.
    await page.getByRole("link", { name: "使用日志" }).click();
    await expect(page).toHaveURL(/\?tab=logs$/);
    const logs = page.getByRole("region", { name: "使用日志" });
    const rows = logs.locator("tbody tr");
    await expect(rows).toHaveCount(20);
    // The newest entry first (entries of its second in either order).
    await expect.poll(async () => f.newest.includes((await rows.first().getAttribute("title")) ?? "")).toBe(true);

    // Filtered by type and model: the URL carries the filters, a reload shows the same view.
    await logs.getByLabel("类型").selectOption({ label: "消费" });
    await logs.getByLabel("模型").fill("gpt-4o-mini");
    await logs.getByRole("button", { name: "筛选" }).click();
    await expect(page).toHaveURL(/type=consume/);
    await expect(page).toHaveURL(/model=gpt-4o-mini/);
    await expect(rows.first().locator("td").nth(2)).toHaveText("gpt-4o-mini");
    await page.reload();
    await expect(rows.first().locator("td").nth(2)).toHaveText("gpt-4o-mini");
    const models = await rows.locator("td:nth-child(3)").allTextContents();
    expect(new Set(models)).toEqual(new Set(["gpt-4o-mini"]));
    await logs.getByRole("link", { name: "下一页" }).click();
    await expect(page).toHaveURL(/page=2/);
    await expect(page.getByRole("navigation", { name: "分页" })).toContainText("第 2");
    if (f.family === "new-api") await shot(page, "11-logs");

    if (f.family === "new-api") {
      // An end date before the start is said in words, before anything is asked.
      await logs.getByLabel("开始日期").fill("2026-11-20");
      await logs.getByLabel("结束日期").fill("2026-11-10");
      await logs.getByRole("button", { name: "筛选" }).click();
      await expect(logs.getByRole("alert")).toHaveText("结束日期不能早于开始日期");
      await expect(page).not.toHaveURL(/from=/);
      // A page past the end offers the way back to the last one.
      await page.goto(`${URL_}/?tab=logs&type=consume&model=gpt-4o-mini&page=9999`);
      const back = logs.getByRole("link", { name: /^回到最后一页/ });
      await expect(back).toBeVisible();
      await back.click();
      await expect(rows.first()).toBeVisible();
      await expect(page.getByRole("navigation", { name: "分页" })).not.toContainText("第 9999");
      // 50 a page, kept in the URL.
      await logs.getByLabel("每页").selectOption("50");
      await logs.getByRole("button", { name: "筛选" }).click();
      await expect(page).toHaveURL(/size=50/);
      await expect(rows).toHaveCount(50);
    }

    // 令牌: masked keys only.
    await page.getByRole("link", { name: "令牌" }).click();
    const tokens = page.getByRole("region", { name: "令牌" });
    await expect(tokens.locator("tbody tr")).toHaveCount(f.tokenKeys.length);
    for (const key of await tokens.locator("code").allTextContents()) expect(key).toMatch(/^.{4}\*{4}.{4}$/);
    const html = await page.content();
    for (const key of f.tokenKeys) expect(html).not.toContain(key);
    if (f.family === "new-api") await shot(page, "12-tokens");

    // 充值记录: orders where the family keeps them, a pointer to the log otherwise.
    await page.getByRole("link", { name: "充值记录" }).click();
    const topups = page.getByRole("region", { name: "充值记录" });
    if (f.family === "new-api") {
      await expect(topups.locator("tbody tr").first()).toBeVisible();
      // Every paid amount with its currency's sign.
      for (const paid of await topups.locator("tbody tr td:nth-child(4)").allTextContents()) {
        expect(paid).toMatch(/^[¥$]\d/);
      }
      await shot(page, "13-topups");
    } else {
      await expect(topups).toContainText("这个站点不向用户提供充值订单记录");
      await topups.getByRole("link", { name: "查看充值类日志" }).click();
      await expect(page).toHaveURL(/tab=logs&type=topup/);
      await expect(page.getByRole("region", { name: "使用日志" }).locator("tbody tr").first()).toContainText("充值");
    }
  });
}

test("fits a phone screen on every tab", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  const f = FAMILIES.find((x) => x.family === "new-api")!;
  await fillSignIn(page, "new-api 站点", f.user.id, f.user.token);
  await page.getByLabel("访问令牌", { exact: true }).press("Enter");
  await expect(activeAccount(page)).toContainText("new-api 用户");
  for (const [tab, region] of [
    ["", "全部账户"],
    ["overview", "额度"],
    ["logs", "使用日志"],
    ["tokens", "令牌"],
    ["topups", "充值记录"],
  ] as const) {
    await page.goto(`${URL_}/${tab ? `?tab=${tab}` : ""}`);
    await expect(page.getByRole("region", { name: region, exact: true })).toBeVisible();
    await expect(page.getByText("正在从站点读取")).toHaveCount(0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow, tab).toBe(false);
    // Every tab is on screen (they wrap; none is cut off at the edge).
    const tabs = page.getByRole("navigation", { name: "账户页面" }).getByRole("link");
    for (const box of await tabs.evaluateAll((links) => links.map((l) => l.getBoundingClientRect().right))) {
      expect(box, tab).toBeLessThanOrEqual(375);
    }
    await shot(page, `14-phone-${tab || "accounts"}`);
  }
});

test("holds several accounts: add one, switch, see the totals, sign one out, reload, sign out everything", async ({
  page,
}) => {
  const [a, b] = [FAMILIES.find((x) => x.family === "new-api")!, FAMILIES.find((x) => x.family === "one-hub")!];
  await fillSignIn(page, "new-api 站点", a.user.id, a.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");

  // 添加账户: the sign-in page with a way back, then the overview with both.
  const switcher = page.getByRole("region", { name: "账户切换" });
  await switcher.locator("summary").click();
  await switcher.getByRole("link", { name: "添加账户" }).click();
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await expect(page.getByRole("link", { name: "← 返回我的账户" })).toBeVisible();
  await shot(page, "18-add-account");
  await fillSignIn(page, "one-hub 站点", b.user.id, b.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("one-hub 用户");
  await expect(page).toHaveURL(`${URL_}/`);

  const overview = page.getByRole("region", { name: "全部账户" });
  const rows = overview.getByRole("list", { name: "账户" }).getByRole("listitem");
  await expect(rows).toHaveCount(2);
  await expect(overview.getByText("读取中…")).toHaveCount(0);
  const total = ((a.totals.quota + b.totals.quota) / 500_000).toLocaleString("en-US", {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });
  await expect(overview.getByRole("region", { name: "合计" })).toContainText(`$${total}`);
  await expect(overview).toContainText("2 个账户合计");
  // The page is the person's; the header's button says what it ends.
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("我的网关账户");
  await expect(page.getByRole("button", { name: "退出当前账户" })).toHaveAttribute("title", /^退出 one-hub 用户；/);
  await shot(page, "15-accounts");

  // Sorted by balance: the larger first.
  await overview.getByLabel("排序").selectOption({ label: "按余额" });
  const richer = a.totals.quota >= b.totals.quota ? "new-api 用户" : "one-hub 用户";
  await expect(rows.first()).toContainText(richer);
  // Another order is kept in the address: a reload shows it still.
  await overview.getByLabel("排序").selectOption({ label: "按今日消费" });
  await expect(page).toHaveURL(/[?&]sort=today/);
  await expect(overview.getByLabel("排序")).toHaveValue("today");
  await page.reload();
  await expect(overview.getByLabel("排序")).toHaveValue("today");
  await overview.getByLabel("排序").selectOption({ label: "按余额" });
  await expect(page).not.toHaveURL(/sort=/);
  // The address changes at once, the rows move in the render after it: a click lands where they settled.
  await expect(rows.first()).toContainText(richer);

  // Switch by opening the other account's row: its pages follow.
  await overview.getByRole("button", { name: /^打开账户：\s*new-api 用户/ }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  await expect(page).toHaveURL(/tab=overview/);

  // Reload: both accounts are still there, the switched-to one active.
  await page.reload();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  await switcher.locator("summary").click();
  await expect(switcher.getByRole("listitem")).toHaveCount(2);
  await shot(page, "16-switcher");

  // The other account's session ends elsewhere: the note names it and offers to sign it in again.
  const { closeDb, createDb } = await import("../../src/server/db/client");
  const db = createDb(process.env.E2E_DB_URL ?? "");
  await db.session.deleteMany({ where: { siteUserId: BigInt(b.user.id) } });
  await closeDb(db);
  await page.reload();
  const note = switcher.getByRole("status").filter({ hasText: "会话已过期" });
  await expect(note).toContainText("one-hub 站点 · one-hub 用户 的会话已过期");
  await shot(page, "16b-session-ended");
  await note.getByRole("link", { name: "重新登录这个账户" }).click();
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await expect(page.getByLabel("站点").locator("option:checked")).toHaveText("one-hub 站点");
  await expect(page.getByLabel("用户ID")).toHaveValue(String(b.user.id));
  await page.getByLabel("访问令牌", { exact: true }).fill(b.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("one-hub 用户");

  // Sign the other one out: the active one stays.
  await switcher.locator("summary").click();
  await switcher.getByRole("button", { name: /退出 new-api 站点/ }).click();
  await expect(activeAccount(page)).toContainText("one-hub 用户");
  // The active account was already this one: the change is done once the menu closed and counts one.
  await expect(switcher.locator("summary")).toContainText("共 1 个");
  await expect(switcher.locator("details")).not.toHaveAttribute("open");

  // Sign out everything: the sign-in page.
  await switcher.locator("summary").click();
  await switcher.getByRole("button", { name: "全部退出" }).click();
  await expect(page.getByRole("heading", { name: "登录网关站点" })).toBeVisible();
});

test("the overview fits a phone screen with several accounts", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  for (const f of FAMILIES.slice(0, 3)) {
    await page.goto(`${URL_}/?add=1`);
    if (f === FAMILIES[1]) await shot(page, "19-phone-add-account");
    await fillSignIn(page, `${f.family} 站点`, f.user.id, f.user.token);
    await page.getByRole("button", { name: "登录" }).click();
    await expect(activeAccount(page)).toContainText(`${f.family} 用户`);
  }
  const overview = page.getByRole("region", { name: "全部账户" });
  await expect(overview.getByRole("list", { name: "账户" }).getByRole("listitem")).toHaveCount(3);
  await expect(overview.getByText("读取中…")).toHaveCount(0);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  expect(overflow).toBe(false);
  await shot(page, "17-phone-accounts");
});

/**
 * A zone whose clock reads about 14:00 now: 今天 then holds most of a day of the stand-in's calls
 * whenever the suite runs (just after midnight 今天 is rightly empty, with nothing to chart by the
 * hour). Etc/GMT-N is N hours ahead of UTC.
 */
const afternoon = (() => {
  const ahead = ((14 - new Date().getUTCHours() + 34) % 24) - 10;
  return ahead === 0 ? "UTC" : `Etc/GMT${ahead > 0 ? "-" : "+"}${Math.abs(ahead)}`;
})();

test.describe(() => {
  test.use({ timezoneId: afternoon });
  test("用量分析 charts the ledger synced at sign-in, loads its chart library only there, and fits a phone", async ({
    page,
  }) => {
    const scripts: string[] = [];
    page.on("response", (res) => {
      if (res.request().resourceType() === "script") scripts.push(res.url());
    });
    const chartCode = async () => {
      for (const url of scripts)
        if ((await (await page.request.get(url)).text()).includes("recharts-surface")) return true;
      return false;
    };
    await page.goto(URL_);
    await expect(page.getByRole("button", { name: "登录" })).toBeVisible();
    expect(await chartCode(), "the sign-in page loads no chart code").toBe(false);

    const f = FAMILIES.find((x) => x.family === "new-api")!;
    await fillSignIn(page, "new-api 站点", f.user.id, f.user.token);
    await page.getByRole("button", { name: "登录" }).click();
    await expect(activeAccount(page)).toContainText("new-api 用户");
    await page.getByRole("link", { name: "用量分析" }).click();
    await expect(page).toHaveURL(/\?tab=usage$/);

    // The sign-in started the backfill; the page follows it and then reads the ledger.
    const sync = page.getByLabel("账本同步");
    await expect(sync).toContainText("上次同步", { timeout: 30_000 });
    await expect(sync).not.toContainText("正在同步");
    await page.getByRole("button", { name: "30 天" }).click();
    const daily = page.getByRole("region", { name: "每日消费（按模型）" });
    await expect(daily.locator(".recharts-bar-rectangle").first()).toBeVisible();
    const byModel = page.getByRole("region", { name: "按模型", exact: true });
    await expect(byModel.locator("tbody tr").first()).toBeVisible();
    await expect(page.getByRole("region", { name: "按令牌" }).locator("tbody tr").first()).toBeVisible();
    await expect(page.getByRole("region", { name: "请求与 tokens" }).locator(".recharts-line").first()).toBeVisible();
    const balance = page.getByRole("region", { name: "余额走势" });
    await expect(balance).toContainText("日均消费");
    await expect(balance.locator(".recharts-line-dot").first()).toBeVisible();
    expect(await chartCode(), "the usage tab loads the chart code").toBe(true);

    // The totals agree with the tables under the charts.
    const spend = await page
      .getByRole("region", { name: "用量分析", exact: true })
      .locator(".stat-value")
      .first()
      .textContent();
    await expect(byModel.locator("tfoot th").last()).toHaveText(spend ?? "");
    await shot(page, "20-usage");

    // Another range: today only, by the hour, kept in the URL.
    await page.getByRole("button", { name: "今天", exact: true }).click();
    await expect(page.getByRole("button", { name: "今天", exact: true })).toHaveAttribute("aria-pressed", "true");
    await expect(page).toHaveURL(/range=today/);
    await expect(page.getByRole("heading", { name: "每小时消费（按模型）" })).toBeVisible();
    await page.reload();
    await expect(page.getByRole("button", { name: "今天", exact: true })).toHaveAttribute("aria-pressed", "true");
    const hourly = page.getByRole("region", { name: "每小时消费（按模型）" });
    await hourly.getByText("每小时明细").click();
    await expect(hourly.locator("tbody tr").first()).toContainText(":00");
    // Hours not yet come are not listed (nor drawn as zero): the newest row is this hour.
    const thisHour = await page.evaluate(() => `${String(new Date().getHours()).padStart(2, "0")}:00`);
    await expect(hourly.locator("tbody tr").first().locator("td").first()).toHaveText(new RegExp(`${thisHour}$`));
    // One word per idea (输入/输出 as on 使用日志), and whole requests on the axis in one unit.
    const usage = page.getByRole("region", { name: "用量分析", exact: true });
    await expect(usage.locator(".stat-label")).toContainText(["消费", "请求", "输入 tokens", "输出 tokens"]);
    const volume = page.getByRole("region", { name: "请求与 tokens" });
    if (await volume.locator(".recharts-line").count()) {
      await expect(
        volume.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value").first(),
      ).toBeVisible();
      const ticks = await volume
        .locator(".recharts-yAxis-tick-labels")
        .first()
        .locator(".recharts-cartesian-axis-tick-value")
        .allTextContents();
      expect(ticks.length).toBeGreaterThan(1);
      for (const tick of ticks) expect(tick).toMatch(/^[\d,]+$|^[\d.]+万$/);
      expect(new Set(ticks.filter((t) => t !== "0").map((t) => t.endsWith("万"))).size).toBeLessThanOrEqual(1);
      expect(ticks.filter((t) => /^\d+\.\d+$/.test(t))).toEqual([]);
    }

    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByRole("button", { name: "30 天" }).click();
    await expect(daily.locator(".recharts-bar-rectangle").first()).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
    await shot(page, "21-usage-phone");

    // A range over a month may be charted by week or by month; the folded table follows.
    await page.setViewportSize({ width: 1440, height: 900 });
    const upTo = await page.evaluate(() => new Date().toLocaleDateString("sv-SE"));
    const since = await page.evaluate(() => new Date(Date.now() - 60 * 86_400_000).toLocaleDateString("sv-SE"));
    await page.goto(`${URL_}/?tab=usage&from=${since}&to=${upTo}`);
    const grain = page.getByRole("group", { name: "时间粒度" });
    await expect(grain.getByRole("button", { name: "按天" })).toHaveAttribute("aria-pressed", "true");
    await grain.getByRole("button", { name: "按月" }).click();
    const monthly = page.getByRole("region", { name: "每月消费（按模型）" });
    await expect(monthly.locator(".recharts-bar-rectangle").first()).toBeVisible();
    await monthly.getByText("每月明细").click();
    const months = await monthly.locator("tbody tr td:first-child").allTextContents();
    expect(months.length).toBeGreaterThanOrEqual(1);
    for (const m of months) expect(m).toMatch(/^\d{4}-\d{2}$/);
    await expect(monthly.locator("tfoot th").last()).toHaveText(
      (await page
        .getByRole("region", { name: "用量分析", exact: true })
        .locator(".stat-value")
        .first()
        .textContent()) ?? "",
    );
    await grain.getByRole("button", { name: "按周" }).click();
    await expect(page.getByRole("heading", { name: "每周消费（按模型）" })).toBeVisible();
    await shot(page, "21-usage-by-week");
  });
});

test("使用日志 from the ledger: a part of a model name in any case, the range's totals, an entry's detail, a card per entry on a phone", async ({
  page,
}) => {
  const f = FAMILIES.find((x) => x.family === "new-api")!;
  await fillSignIn(page, "new-api 站点", f.user.id, f.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  await page.goto(`${URL_}/?tab=usage`);
  await expect(page.getByLabel("账本同步")).toContainText("上次同步", { timeout: 30_000 });

  await page.goto(`${URL_}/?tab=logs`);
  const logs = page.getByRole("region", { name: "使用日志", exact: true });
  // A count is written one way wherever it shows: `1,542 条` in the totals and `共 1,542 条` below.
  const everything = (await logs.getByLabel("合计").locator("dd").first().textContent()) ?? "";
  expect(everything).toMatch(/^\d{1,3}(,\d{3})+ 条$/);
  await expect(page.getByRole("navigation", { name: "分页" })).toContainText(`共 ${everything}`);
  // The model field offers the names the ledger knows.
  await expect(logs.locator("#log-models option").first()).toBeAttached();
  await logs.getByLabel("模型").fill("SONNET");
  await logs.getByRole("button", { name: "筛选" }).click();
  await expect(page).toHaveURL(/model=SONNET/);
  const rows = logs.locator("tbody tr.entry");
  await expect(rows.first()).toBeVisible();
  expect(new Set(await rows.locator(".c-model").allTextContents())).toEqual(new Set(["claude-sonnet-4"]));
  const totals = logs.getByLabel("符合条件的合计");
  await expect(totals).toContainText("消费请求");
  await expect(totals).toContainText("花费");
  const total = (await page.getByRole("navigation", { name: "分页" }).textContent())?.match(/共 ([\d,]+) 条/)?.[1];
  await expect(totals.locator("dd").first()).toHaveText(`${total} 条`);
  // The zone the times are in is named once.
  await expect(logs.locator("thead th").first()).toHaveText(/^时间（.+）$/);

  // A paid call opens in place with every field and the site's ratios (an error entry has none).
  const open = rows
    .filter({ has: page.locator(".c-type", { hasText: /^消费$/ }) })
    .first()
    .getByRole("button");
  await open.click();
  await expect(open).toHaveAttribute("aria-expanded", "true");
  const detail = logs.locator(".log-detail");
  await expect(detail).toContainText("模型倍率");
  await expect(detail).toContainText("补全倍率");
  await expect(detail).toContainText("分组");
  await expect(detail).toContainText("内容");
  await shot(page, "11b-logs-detail");
  await open.click();
  await expect(detail).toHaveCount(0);

  // On a phone: a card per entry, its time, model and cost in sight; 上一页 and 下一页 side by side.
  await page.setViewportSize({ width: 390, height: 844 });
  const cost = rows.first().locator(".c-cost");
  await expect(cost).toBeVisible();
  const box = await cost.boundingBox();
  expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  const pager = page.getByRole("navigation", { name: "分页" });
  const [back, next] = [pager.locator(".button").first(), pager.locator(".button").last()];
  expect((await back.boundingBox())?.y).toBe((await next.boundingBox())?.y);
  expect((await back.boundingBox())?.height).toBeLessThan(50);
  await shot(page, "11c-logs-phone");

  // Every figure of 概览 fits whole on a phone, up to $999,999.99 and ¥9,999,999.99.
  await page.goto(`${URL_}/?tab=overview`);
  const figures = page.locator(".stats .stat-value");
  await expect(figures.first()).toBeVisible();
  for (const text of ["$999,999.99", "¥9,999,999.99"]) {
    const clipped = await figures.evaluateAll(
      (all, shown) =>
        all.filter((e) => {
          e.textContent = shown;
          const stat = e.closest(".stat")?.getBoundingClientRect();
          const box = e.getBoundingClientRect();
          return e.scrollWidth > e.clientWidth || !stat || box.right > stat.right;
        }).length,
      text,
    );
    expect(clipped, text).toBe(0);
  }
  await shot(page, "11d-figures-phone");
});

test("用量分析 downloads the range as CSV (its row count shown first) and the month's statement as PDF", async ({
  page,
}) => {
  const f = FAMILIES.find((x) => x.family === "new-api")!;
  await fillSignIn(page, "new-api 站点", f.user.id, f.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  // A range the service refuses, opened from a link: said once, in words, and nothing asked.
  await page.goto(`${URL_}/?tab=usage&from=2024-01-01&to=2026-11-20`);
  await expect(page.getByText(/日期范围最长 800 天/)).toHaveCount(1);
  await expect(page.getByRole("alert").filter({ hasText: "日期范围" })).toHaveText(
    "日期范围最长 800 天：请调整上面的日期",
  );
  await expect(page.getByRole("button", { name: "重试" })).toHaveCount(0);
  await shot(page, "18-usage-range-refused");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "18-usage-range-refused-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/?tab=usage`);
  await expect(page.getByLabel("账本同步")).toContainText("上次同步", { timeout: 30_000 });
  await page.getByRole("button", { name: "30 天" }).click();
  const exports = page.getByLabel("导出");
  await expect(exports).toContainText("所选范围共");
  const shown = Number(((await exports.locator("strong").textContent()) ?? "").replace(/,/g, ""));
  expect(shown).toBeGreaterThan(0);

  const [csv] = await Promise.all([
    page.waitForEvent("download"),
    exports.getByRole("link", { name: "下载 CSV" }).click(),
  ]);
  expect(csv.suggestedFilename()).toMatch(/^usage_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/);
  const bytes = readFileSync(await csv.path());
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const rows = parse(bytes, { bom: true });
  expect(rows[0]?.slice(0, 4)).toEqual(["时间", "站点", "用户", "类型"]);
  expect(rows.length - 1).toBe(shown);
  expect(new Set(rows.slice(1).map((r) => r[1]))).toEqual(new Set(["new-api 站点"]));

  // 对账 as its own file: a row per day of the range, each with its difference.
  const [rec] = await Promise.all([
    page.waitForEvent("download"),
    exports.getByRole("link", { name: "下载对账 CSV" }).click(),
  ]);
  expect(rec.suggestedFilename()).toMatch(/^reconciliation_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/);
  const days = parse(readFileSync(await rec.path()), { bom: true });
  expect(days[0]).toEqual([
    "日期",
    "站点",
    "用户",
    "起始快照",
    "结束快照",
    "余额变化 (USD)",
    "消费 (USD)",
    "充值 (USD)",
    "签到奖励 (USD)",
    "退款 (USD)",
    "无金额的调整（条）",
    "日志应有变化 (USD)",
    "差额 (USD)",
    "不符",
  ]);
  expect(days.length - 1).toBe(30);

  const [pdf] = await Promise.all([
    page.waitForEvent("download"),
    exports.getByRole("link", { name: "下载月度对账单 PDF" }).click(),
  ]);
  expect(pdf.suggestedFilename()).toMatch(/^statement_\d{4}-\d{2}\.pdf$/);
  const text = execFileSync("pdftotext", ["-layout", await pdf.path(), "-"]).toString();
  expect(text).toContain("用量对账单");
  expect(text).toContain("new-api 站点");
  expect(text).toContain("按模型");
  await shot(page, "22-usage-exports");
});

test("/admin says how to set the operator's password when none is set", async ({ page }) => {
  await page.goto(`${EMPTY_URL}/admin`);
  await expect(page.getByRole("heading", { name: "站点管理" })).toBeVisible();
  await expect(page.getByText("尚未设置管理员密码")).toBeVisible();
  await expect(page.getByText("npm run sites -- admin-password")).toBeVisible();
  await shot(page, "30-admin-no-password");
});

test("/admin: the operator signs in, adds sites of two families and an unreachable one, edits, removes, reads the audit log", async ({
  page,
}) => {
  const registered = FAMILIES.find((x) => x.family === "new-api")!;
  // Gateways no site has yet: a new-api and a one-hub.
  const [newApi, hub] = (JSON.parse(process.env.E2E_UNREGISTERED ?? "[]") as string[]).map((url) => ({ url })) as [
    { url: string },
    { url: string },
  ];
  await page.goto(`${URL_}/admin`);
  const password = page.getByLabel("管理员密码");
  await password.fill("not the password");
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page.getByRole("form", { name: "站点管理" }).getByRole("alert")).toHaveText("管理员密码错误");
  await expect(password).toHaveValue("");
  await shot(page, "31-admin-sign-in");
  await password.fill(E2E_ADMIN_PASSWORD);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page.getByRole("heading", { name: "站点管理", level: 1 })).toBeVisible();

  // One address, one site: a gateway already registered is refused, naming the site that has it.
  const add = page.getByRole("form", { name: "添加" });
  await add.getByLabel("名称").fill("管理测试 重复");
  await add.getByLabel("地址").fill(`${registered.url}/`);
  await add.getByRole("button", { name: "添加" }).click();
  await expect(add.getByRole("alert")).toContainText("该地址已登记为站点「new-api 站点」");
  await expect(page.getByRole("listitem", { name: "管理测试 重复" })).toHaveCount(0);
  await shot(page, "35-admin-duplicate");

  // Add: probed first; the form says what it found.
  await add.getByLabel("名称").fill("管理测试 new-api");
  await add.getByLabel("地址").fill(newApi.url);
  await add.getByRole("button", { name: "添加" }).click();
  await expect(add.getByRole("status")).toContainText("可访问");
  await expect(add.getByRole("status")).toContainText("new-api");
  const added = page.getByRole("listitem", { name: "管理测试 new-api" });
  await expect(added).toContainText("可访问");

  // An unreachable address: saved only after 仍然保存.
  await add.getByLabel("名称").fill("管理测试 不可达");
  await add.getByLabel("地址").fill("http://127.0.0.1:9");
  await add.getByRole("button", { name: "添加" }).click();
  await expect(add.getByRole("alert")).toContainText("站点无法访问");
  await expect(page.getByRole("listitem", { name: "管理测试 不可达" })).toHaveCount(0);
  await add.getByLabel("仍然保存（站点现在无法访问）").check();
  await add.getByRole("button", { name: "添加" }).click();
  const unreachable = page.getByRole("listitem", { name: "管理测试 不可达" });
  await expect(unreachable).toContainText("无法访问");
  // Saved, and said so with what it means: not a plain 已保存.
  await expect(add.locator(".notice")).toContainText("已保存，但站点现在无法访问");

  // Edit: another name and the one-hub's address, probed again.
  await added.getByRole("button", { name: "编辑" }).click();
  const edit = added.getByRole("form", { name: "保存修改" });
  await edit.getByLabel("名称").fill("管理测试 one-hub");
  await edit.getByLabel("地址").fill(hub.url);
  // A budget that is not a whole number in range is said in words, never saved as the default.
  const budgetField = edit.getByLabel("每分钟请求数（留空为默认）");
  for (const wrong of ["abc", "-5", "1.5"]) {
    await budgetField.fill(wrong);
    await edit.getByRole("button", { name: "保存修改" }).click();
    await expect(edit.getByRole("alert")).toHaveText("每分钟请求数应为 1 到 100000 之间的整数；留空则使用默认值");
  }
  await budgetField.fill("30");
  // A new address is a move: the form says what it does, and a same-gateway claim is checked.
  await expect(edit).toContainText("在旧地址登录的会话全部结束");
  await edit.getByLabel(/新地址是同一网关/).check();
  await shot(page, "34-admin-move");
  await edit.getByRole("button", { name: "保存修改" }).click();
  await expect(edit.getByRole("alert")).toContainText("不是同一网关");
  await edit.getByLabel(/新地址是同一网关/).uncheck();
  await edit.getByRole("button", { name: "保存修改" }).click();
  const moved = page.getByRole("listitem", { name: "管理测试 one-hub" });
  await expect(moved).toContainText("one-hub");
  await expect(moved).toContainText("30");
  await expect(moved.getByRole("status")).toContainText(
    "已迁移到新地址：结束了旧地址的 0 个会话；原账本（0 条）已另行保存",
  );
  await shot(page, "32-admin-sites");

  // Remove both, each after saying whether it has live sessions (these have none).
  for (const item of [moved, unreachable]) {
    await item.getByRole("button", { name: "移除" }).click();
    await expect(item.getByRole("alertdialog", { name: "确认移除" })).toContainText("该站点没有有效会话。确认移除");
    await item.getByRole("button", { name: "确认移除" }).click();
    await expect(item).toHaveCount(0);
  }

  // The audit log reads as sentences: who did what to which site.
  const audit = page.getByRole("region", { name: "审计日志" });
  const lines = audit.getByRole("listitem");
  await expect(lines.first()).toContainText("的管理员移除了站点「管理测试 不可达」（http://127.0.0.1:9）");
  await expect(audit).toContainText(
    `修改了站点「管理测试 new-api」：名称「管理测试 new-api」改为「管理测试 one-hub」；地址 ${newApi.url} 改为 ${hub.url}；请求预算由默认改为每分钟 30 次`,
  );
  await expect(audit).toContainText("添加了站点「管理测试 new-api」");
  await expect(audit).toContainText("登录站点管理失败");
  expect(await audit.locator("code").count()).toBe(0);
  // Only the site changes: no sign-ins among them.
  await audit.getByLabel("显示").selectOption({ label: "站点变更" });
  await expect(lines).toHaveCount(5);
  await expect(audit.getByRole("list")).not.toContainText("登录");
  await shot(page, "35-admin-audit");

  await page.setViewportSize({ width: 375, height: 740 });
  await page.reload();
  await expect(page.getByRole("heading", { name: "站点管理", level: 1 })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "33-admin-phone");

  await page.getByRole("button", { name: "退出" }).click();
  await expect(page.getByLabel("管理员密码")).toBeVisible();
});
