import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { generate } from "otplib";
import { ALICE } from "../support/gateway";
import { HubClient, decryptLikeHub, hubAccount } from "../support/hub-client";
import { E2E_ADMIN_PASSWORD } from "./constants";
import { FAMILIES, URL_, expect, fillSignIn, shot, test } from "./fixtures";

/**
 * A workspace as a person uses it: created on a desktop, two accounts saved in it, then a phone
 * signed in to the same workspace sees the same accounts with their aliases.
 */
test("a phone and a desktop signed in to one workspace see the same accounts", async ({
  page,
  browser,
  consoleErrors,
}) => {
  // A whole journey: two accounts, a phone, 自动签到, alerts, usage in the workspace's zone, a statement.
  test.setTimeout(90_000);
  const family = FAMILIES[0];
  if (!family) throw new Error("no family site");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/workspace?create=1`);
  await expect(page.getByRole("heading", { name: "创建工作区" })).toBeVisible();
  await page.getByLabel("工作区名称").fill("端到端工作区");
  // A password of blanks is refused by the server, and what was typed stays to be corrected.
  const blank = " ".repeat(12);
  await page.getByLabel("密码", { exact: true }).fill(blank);
  await page.getByLabel("再输入一次密码").fill(blank);
  await page.getByRole("button", { name: "创建并登录" }).click();
  await expect(page.locator(".error")).toHaveText("密码不能只有空格");
  await expect(page.getByLabel("密码", { exact: true })).toHaveValue(blank);
  await expect(page.getByLabel("再输入一次密码")).toHaveValue(blank);
  await expect(page.getByLabel("工作区名称")).toHaveValue("端到端工作区");
  await shot(page, "workspace-create-refused");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "workspace-create-refused-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.getByLabel("密码", { exact: true }).fill("e2e workspace password");
  await page.getByLabel("再输入一次密码").fill("e2e workspace password");
  await page.getByRole("button", { name: "创建并登录" }).click();

  // A new workspace asks for its first account; each is verified with its site, then saved.
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await expect(page.getByText("工作区 · 端到端工作区")).toBeVisible();
  // Saved with nothing filled in: said in words on the page, nothing sent.
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(page.locator(".error")).toHaveText("请填写完整信息：站点、用户ID 和访问令牌");
  await fillSignIn(page, "严格站点", ALICE.id, "sk-not-the-token");
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(page.locator(".error")).not.toHaveText("");
  await fillSignIn(page, "严格站点", ALICE.id, ALICE.token);
  await page.getByLabel("别名（可选）").fill("桌面主力");
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(page.getByRole("heading", { name: "端到端工作区" })).toBeVisible();
  await page.goto(`${URL_}/?add=1`);
  await fillSignIn(page, `${family.family} 站点`, family.user.id, family.user.token);
  await page.getByLabel("别名（可选）").fill("家族站");
  await page.getByRole("button", { name: "验证并保存" }).click();
  const rows = page.getByRole("list", { name: "账户" }).getByRole("listitem");
  await expect(rows).toHaveCount(2);

  // The same account again, under another alias: said to be there, nothing changed.
  await page.goto(`${URL_}/?add=1`);
  await fillSignIn(page, `${family.family} 站点`, family.user.id, family.user.token);
  await page.getByLabel("别名（可选）").fill("改个名字");
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(page.locator(".error")).toContainText("这个账户已保存在工作区中（家族站），没有做任何修改");
  await shot(page, "workspace-add-again");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "workspace-add-again-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(URL_);
  await expect(rows).toHaveCount(2);
  await expect(rows.filter({ hasText: "改个名字" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^打开账户：/ })).toHaveCount(2);
  await expect(rows.filter({ hasText: "桌面主力" })).toContainText("余额");
  await shot(page, "workspace-desktop");

  // The phone: its own browser, signed in with the workspace's name and password only.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "zh-CN" });
  const mobile = await phone.newPage();
  const phoneErrors: string[] = [];
  mobile.on("console", (m) => {
    if (m.type() === "error") phoneErrors.push(m.text());
  });
  await mobile.goto(URL_);
  await mobile.getByRole("link", { name: "登录或创建工作区" }).click();
  await mobile.getByLabel("工作区名称").fill("端到端工作区");
  await mobile.getByLabel("密码", { exact: true }).fill("e2e workspace password");
  await mobile.getByRole("button", { name: "登录" }).click();
  const phoneRows = mobile.getByRole("list", { name: "账户" }).getByRole("listitem");
  await expect(phoneRows).toHaveCount(2);
  for (const alias of ["桌面主力", "家族站"]) await expect(phoneRows.filter({ hasText: alias })).toHaveCount(1);
  await shot(mobile, "workspace-phone");

  // The desktop sees the phone among its devices and signs it out.
  await page.goto(`${URL_}/?tab=workspace`);
  const devices = page.getByRole("region", { name: "已登录的设备" }).getByRole("listitem");
  await expect(devices).toHaveCount(2);
  await devices.filter({ hasNotText: "本设备" }).getByRole("button", { name: "退出此设备" }).click();
  await expect(devices).toHaveCount(1);
  await mobile.reload();
  await expect(mobile.getByRole("heading", { name: "登录网关站点" })).toBeVisible();
  await phone.close();
  expect(phoneErrors).toEqual([]);

  // 自动签到 per account: switched on here, said on the account and on its row in 全部账户.
  const saved = page.locator("li.saved-account", { hasText: "家族站" });
  // The box follows the saved setting once the server has it.
  await saved.getByLabel("自动签到").click();
  await expect(saved.getByLabel("自动签到")).toBeChecked();
  // Not offered where the site's family has no check-in: a one-hub account, saved for a moment.
  const hub = FAMILIES.find((f) => f.family === "one-hub");
  if (!hub) throw new Error("no one-hub site");
  await page.goto(`${URL_}/?add=1`);
  await fillSignIn(page, "one-hub 站点", hub.user.id, hub.user.token);
  await page.getByLabel("别名（可选）").fill("无签到站");
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(rows).toHaveCount(3);
  await page.goto(`${URL_}/?tab=workspace`);
  const noCheckin = page.locator("li.saved-account", { hasText: "无签到站" });
  await expect(noCheckin.getByLabel("置顶")).toBeVisible();
  await expect(noCheckin.getByLabel("自动签到")).toHaveCount(0);
  await expect(saved.getByLabel("自动签到")).toBeChecked();
  await noCheckin.scrollIntoViewIfNeeded();
  await shot(page, "workspace-no-checkin");
  await page.setViewportSize({ width: 390, height: 844 });
  await noCheckin.scrollIntoViewIfNeeded();
  await shot(page, "workspace-no-checkin-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await noCheckin.getByRole("button", { name: "移除" }).click();
  await page.getByRole("alertdialog", { name: "确认移除 无签到站" }).getByRole("button", { name: "确认移除" }).click();
  await expect(noCheckin).toHaveCount(0);
  // Until the account's moment of the site's day it waits; once that has come (the job may reach
  // it while this runs, by the time of day) its row tells the day's outcome.
  const told = /自动签到(：等待今天的签到时刻| \d{2}-\d{2}：)/;
  await expect(saved).toContainText(told);
  await shot(page, "workspace-auto-checkin");
  await page.goto(URL_);
  await expect(rows.filter({ hasText: "家族站" })).toContainText(told);
  await expect(rows.filter({ hasText: "桌面主力" })).not.toContainText("自动签到");

  // 提醒: the three default rules, a channel refused for a loopback address, a rule added.
  await page.goto(`${URL_}/?tab=alerts`);
  const rules = page.getByRole("list", { name: "规则" }).getByRole("listitem");
  await expect(rules).toHaveCount(3);
  await expect(rules.first()).toContainText("余额可用天数少于 3 天");
  await expect(page.getByText("目前没有提醒：一切正常。")).toBeVisible();
  // 对账 of the first account: a row per day of the last two weeks.
  const reconcile = page.getByRole("region", { name: "对账" });
  await expect(reconcile.locator("tbody tr")).toHaveCount(14);
  const hook = page.getByRole("form", { name: "添加渠道" });
  await hook.getByLabel("名称").fill("本机钩子");
  await hook.getByLabel("Webhook 地址").fill("http://127.0.0.1:9/hook");
  await hook.getByRole("button", { name: "添加渠道" }).click();
  await expect(page.getByRole("region", { name: "通知渠道" }).getByRole("alert")).toContainText(
    "不能发送到内网、本机或保留地址",
  );
  const add = page.getByRole("form", { name: "添加规则" });
  await add.getByLabel("条件").selectOption({ label: "余额低于" });
  await add.getByLabel("数值（美元）").fill("5");
  await add.getByLabel("账户").selectOption({ label: `家族站（${family.family} 站点）` });
  await add.getByRole("button", { name: "添加规则" }).click();
  await expect(rules).toHaveCount(4);
  await expect(rules.last()).toContainText("余额低于 5 美元 · 家族站 · 只在本页显示");
  await shot(page, "workspace-alerts");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(rules).toHaveCount(4);
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "workspace-alerts-phone");

  // 摘要: needs a channel, and says so.
  const digests = page.getByRole("region", { name: "摘要" });
  await expect(digests).toContainText("还没有渠道：请先在下方添加通知渠道。");
  await digests.getByRole("button", { name: "保存摘要" }).click();
  await expect(digests.getByRole("alert")).toHaveText("请至少选择一个通知渠道");

  // The workspace's pages read times and days in its zone, named once, as its alerts and digests do.
  await expect(page.locator(".zone-note")).toHaveText(
    "页面中的时间均为工作区的时区（Asia/Shanghai），与提醒和日报相同；可在「提醒」中修改。",
  );
  const today = new Intl.DateTimeFormat("sv-SE", { timeZone: "Asia/Shanghai" }).format(new Date());
  await page.goto(`${URL_}/?tab=usage&accounts=all&range=today`);
  const usage = page.getByRole("region", { name: "用量分析", exact: true });
  await expect(usage).toContainText(`${today} 至 ${today}`);
  // Its accounts are called by their aliases in the ledger's tables and charts.
  const coverage = usage.locator(".coverage");
  await expect(coverage).toContainText("桌面主力（严格站点）");
  await expect(coverage).toContainText(`家族站（${family.family} 站点）`);
  await shot(page, "workspace-usage-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, "workspace-usage");
  await page.setViewportSize({ width: 390, height: 844 });

  // A monthly digest's one-time link: a page with the month, the PDF once, then the reason it is gone.
  const { closeDb, createDb } = await import("../../src/server/db/client");
  const { createStatementLink } = await import("../../src/server/alerts/statement-links");
  const db = createDb(process.env.E2E_DB_URL ?? "");
  const month = new Date().toISOString().slice(0, 7);
  let link = "";
  try {
    const owner = await db.workspace.findFirstOrThrow({ where: { name: "端到端工作区" }, select: { id: true } });
    link = await createStatementLink(db, owner.id, { month, timeZone: "UTC", origin: URL_ });
  } finally {
    await closeDb(db);
  }
  await page.goto(link);
  await expect(page.getByRole("heading", { name: `${month} 用量对账单` })).toBeVisible();
  await shot(page, "statement-link-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, "statement-link");
  const [pdf] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "下载对账单" }).click(),
  ]);
  expect(pdf.suggestedFilename()).toBe(`statement_${month}.pdf`);
  const text = execFileSync("pdftotext", ["-layout", await pdf.path(), "-"]).toString();
  expect(text).toContain(`用量对账单 ${month}`);
  expect(text).toContain("桌面主力");
  await page.reload();
  await expect(page.getByRole("status")).toHaveText(
    "这个链接已经用过：对账单只能通过链接下载一次。请登录控制台，在「导出」中下载。",
  );
  void consoleErrors;
});

test("turns on the second factor with an authenticator, then asks for a code at sign-in", async ({
  page,
  consoleErrors,
}) => {
  await page.goto(`${URL_}/workspace?create=1`);
  await page.getByLabel("工作区名称").fill("两步工作区");
  await page.getByLabel("密码", { exact: true }).fill("e2e totp password!");
  await page.getByLabel("再输入一次密码").fill("e2e totp password!");
  await page.getByRole("button", { name: "创建并登录" }).click();
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await page.goto(`${URL_}/?tab=workspace`);
  const card = page.getByRole("region", { name: "两步验证" });
  await card.getByRole("button", { name: "开启两步验证" }).click();
  await expect(card.getByRole("img", { name: "两步验证二维码" })).toBeVisible();
  const secret = ((await card.locator("pre.code").textContent()) ?? "").replace(/\s/g, "");
  await card.getByLabel("验证器显示的 6 位验证码").fill(await generate({ secret }));
  await card.getByLabel("当前密码").fill("e2e totp password!");
  await card.getByRole("button", { name: "确认并开启" }).click();
  await expect(card.getByText("两步验证已开启。以下恢复码只显示这一次")).toBeVisible();
  await expect(card.locator("pre.code")).toHaveText(/^([a-z0-9]{5}-[a-z0-9]{5}\n?){10}$/);
  await shot(page, "workspace-totp");

  await page.getByRole("button", { name: "退出工作区" }).click();
  await expect(page.getByRole("heading", { name: "登录工作区" })).toBeVisible();
  await page.getByLabel("工作区名称").fill("两步工作区");
  await page.getByLabel("密码", { exact: true }).fill("e2e totp password!");
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page.getByRole("heading", { name: "两步验证" })).toBeVisible();
  await page.getByLabel("验证码或恢复码").fill("000000");
  await page.getByRole("button", { name: "验证并登录" }).click();
  await expect(page.locator(".error")).toHaveText("两步验证码错误或已使用");
  // The next step's code: the one used to turn it on may not be used again.
  await page.getByLabel("验证码或恢复码").fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  await page.getByRole("button", { name: "验证并登录" }).click();
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  void consoleErrors;
});

test("a workspace adds a site the service lacks, signs in to it, and the operator sees it", async ({
  page,
  consoleErrors,
}) => {
  const own = JSON.parse(process.env.E2E_OWN_SITE ?? "{}") as { url: string; user: { id: number; token: string } };
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/workspace?create=1`);
  await page.getByLabel("工作区名称").fill("自建站点工作区");
  await page.getByLabel("密码", { exact: true }).fill("own sites password");
  await page.getByLabel("再输入一次密码").fill("own sites password");
  await page.getByRole("button", { name: "创建并登录" }).click();
  // The site is not among the registered ones: the form says where to add it.
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await expect(page.getByLabel("站点").locator("option", { hasText: "自建中转" })).toHaveCount(0);
  await page.getByRole("link", { name: "在「工作区」中添加自己的站点" }).click();

  const sites = page.getByRole("region", { name: "站点", exact: true });
  const form = sites.getByRole("form", { name: "添加站点" });
  // An empty address and a registered one are refused in words; nothing is saved.
  await form.getByRole("button", { name: "探测站点" }).click();
  await expect(sites.getByRole("alert")).toHaveText("请填写站点地址");
  await form.getByLabel("站点地址").fill(`${FAMILIES[0]?.url ?? ""}/`);
  await form.getByRole("button", { name: "探测站点" }).click();
  await expect(sites.getByRole("alert")).toContainText("这个地址已是本服务登记的站点");
  // Probed first: what it is, shown before it is added.
  await form.getByLabel("站点地址").fill(`${own.url}/`);
  await form.getByRole("button", { name: "探测站点" }).click();
  const finding = sites.getByRole("definition");
  await expect(sites.getByLabel("探测结果")).toContainText("自建中转");
  await expect(sites.getByLabel("探测结果")).toContainText("new-api");
  await expect(finding.first()).toBeVisible();
  await shot(page, "workspace-site-probed");
  await page.setViewportSize({ width: 390, height: 844 });
  await sites.scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "workspace-site-probed-phone");
  await page.setViewportSize({ width: 1440, height: 900 });
  await sites.getByRole("button", { name: "添加到工作区" }).click();
  await expect(sites.getByRole("status")).toContainText("已添加「自建中转」");
  await expect(sites.getByRole("list", { name: "自行添加的站点" })).toContainText(own.url);

  // It is offered for the workspace's accounts now.
  await sites.getByRole("link", { name: "添加账户" }).click();
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await fillSignIn(page, "自建中转", own.user.id, own.user.token);
  await page.getByRole("button", { name: "验证并保存" }).click();
  await expect(page.getByRole("heading", { name: "自建站点工作区" })).toBeVisible();
  await expect(page.getByRole("list", { name: "账户" }).getByRole("listitem")).toHaveCount(1);

  // Not removable while an account is on it.
  await page.goto(`${URL_}/?tab=workspace`);
  await sites.getByRole("button", { name: "移除" }).click();
  await expect(sites.getByRole("alert")).toHaveText("本工作区还有 1 个账户在这个站点上，请先移除它们");
  await sites.scrollIntoViewIfNeeded();
  await shot(page, "workspace-sites");
  await page.setViewportSize({ width: 390, height: 844 });
  await sites.scrollIntoViewIfNeeded();
  await shot(page, "workspace-sites-phone");

  // The operator sees it, with how many workspaces use it.
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/admin`);
  const password = page.getByLabel("管理员密码");
  if (await password.isVisible()) {
    await password.fill(E2E_ADMIN_PASSWORD);
    await page.getByRole("button", { name: "登录" }).click();
  }
  const admin = page.getByRole("region", { name: "工作区添加的站点", exact: true });
  const row = admin.getByRole("row", { name: /自建中转/ });
  await expect(row).toContainText("new-api");
  await expect(row.getByRole("cell").nth(2)).toHaveText("1");
  await admin.scrollIntoViewIfNeeded();
  await shot(page, "admin-workspace-sites");
  await page.setViewportSize({ width: 390, height: 844 });
  await admin.scrollIntoViewIfNeeded();
  await shot(page, "admin-workspace-sites-phone");

  // All API Hub: a sync credential made here, the extension's accounts in, the workspace's out.
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/?tab=workspace`);
  const hub = page.getByRole("region", { name: "All API Hub 同步" });
  await expect(hub.getByRole("list", { name: "最近同步" })).toHaveCount(0);
  await expect(hub).toContainText("扩展还没有同步过");
  await expect(hub.locator("code").first()).toHaveText(`${URL_}/dav/`);
  await hub.getByRole("button", { name: "创建同步凭据" }).click();
  await hub.getByLabel("工作区密码").fill("own sites password");
  // The password asked for in place, at a phone's width too.
  await page.setViewportSize({ width: 390, height: 844 });
  await hub.getByLabel("工作区密码").scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await page.screenshot({ path: "test-results/screens/workspace-hub-credential-phone.png" });
  await page.setViewportSize({ width: 1440, height: 900 });
  await hub.getByRole("button", { name: "创建", exact: true }).click();
  const credential = (await hub.locator("pre.code").textContent()) ?? "";
  expect(credential).toMatch(/^\S{40,}$/);
  await hub.getByRole("button", { name: "我已保存" }).click();
  const family = FAMILIES[0];
  if (!family) throw new Error("no family site");
  const at = Date.now() - 60_000;
  const extension = new HubClient(
    { base: `${URL_}/dav/`, user: "sync", pass: credential },
    {
      accounts: [
        hubAccount(
          "account-e2e-1",
          { url: family.url, name: "扩展里的账户" },
          { id: family.user.id, token: family.user.token, username: "alice" },
          at,
        ),
        hubAccount(
          "account-e2e-2",
          { url: family.url, name: "Cookie 账户", type: "one-hub" },
          { id: 9, token: "", username: "bob" },
          at,
          {
            authType: "cookie",
            cookieAuth: { sessionCookie: "session=e2e" },
          },
        ),
      ],
    },
  );
  await extension.syncOnce();
  // The workspace's own account reached the extension in the same sync.
  expect(extension.local.accounts.map((a) => a.account_info.id)).toContain(String(own.user.id));
  await page.reload();
  await expect(hub.getByRole("list", { name: "最近同步" })).toContainText("新增 1 · 未同步 1");
  await expect(hub.getByRole("list", { name: "最近同步" })).toContainText("扩展里的账户 · alice");
  await expect(hub.getByRole("list", { name: "未同步的账户" })).toContainText("Cookie 账户 · bob");
  await expect(hub.getByLabel("同步状态")).toContainText("扩展上次写入");
  await expect(hub.getByLabel("同步状态")).toContainText("上次读取");
  await page.getByRole("region", { name: "API 令牌" }).scrollIntoViewIfNeeded();
  await expect(page.getByRole("region", { name: "API 令牌" })).toContainText("同步凭据（WebDAV）");
  await expect(page.getByRole("region", { name: "API 令牌" })).toContainText(`MCP 地址 ${URL_}/api/mcp`);
  await hub.scrollIntoViewIfNeeded();
  await shot(page, "workspace-hub-sync");
  await page.setViewportSize({ width: 390, height: 844 });
  await hub.scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "workspace-hub-sync-phone");

  // The whole workspace as an encrypted file: the workspace's password, then a passphrase twice.
  await page.setViewportSize({ width: 1440, height: 900 });
  const backup = page.getByRole("region", { name: "完整备份" });
  const backupForm = backup.getByRole("form", { name: "下载备份" });
  await backupForm.getByLabel("工作区密码").fill("own sites password");
  await backupForm.getByLabel("备份密码", { exact: true }).fill("e2e backup passphrase");
  await backupForm.getByLabel("再输入一次备份密码").fill("e2e backup passphrase");
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    backupForm.getByRole("button", { name: "下载加密备份" }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^workspace-backup-\d{4}-\d{2}-\d{2}\.json$/);
  const text = await readFile((await download.path()) ?? "", "utf8");
  const inside = JSON.parse(
    await decryptLikeHub(JSON.parse(text) as Record<string, unknown>, "e2e backup passphrase"),
  ) as {
    accounts: { accounts: unknown[] };
  };
  expect(inside.accounts.accounts).toHaveLength(2);
  await expect(backup.getByRole("status")).toContainText("备份已下载");
  await backup.scrollIntoViewIfNeeded();
  await shot(page, "workspace-backup");
  await page.setViewportSize({ width: 390, height: 844 });
  await backup.scrollIntoViewIfNeeded();
  await shot(page, "workspace-backup-phone");
  void consoleErrors;
});
