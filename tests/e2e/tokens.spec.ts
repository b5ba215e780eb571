import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { FAMILIES, KEYS, URL_, activeAccount, expect, fillSignIn, shot, test } from "./fixtures";

/** The open dialog as axe checks it (WCAG 2.2 AA): no serious or critical finding. */
async function axeClean(page: Page, name: string) {
  const results = await new AxeBuilder({ page })
    .include("dialog[open]")
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
    .analyze();
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} @ ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
  expect(serious, name).toEqual([]);
}

/** 令牌: create one, reveal and copy its key, export it, disable, edit, delete; on a phone too. */
test("creates, reveals, exports, disables, edits and deletes a token, at desktop and phone width", async ({
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: URL_ });
  await page.goto(URL_);
  await fillSignIn(page, "令牌测试站点", KEYS.user.id, KEYS.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  await page.goto(`${URL_}/?tab=tokens`);
  const panel = page.getByRole("region", { name: "令牌", exact: true });
  await expect(panel.locator("tbody tr").first()).toBeVisible();

  // The form says the family's rules, and checks them before anything is sent.
  await panel.getByRole("button", { name: "新建令牌" }).click();
  const form = page.getByRole("dialog", { name: "新建令牌" });
  await expect(form.getByText("0 / 50 字节")).toBeVisible();
  await form.getByRole("button", { name: "创建" }).click();
  await expect(form.getByRole("alert")).toHaveText("请填写令牌名称");
  await form.getByLabel("名称").fill("脚本-e2e");
  await form.getByLabel("限定额度").check();
  await form.getByLabel("可用额度（$）").fill("10");
  await form.getByLabel("限用模型").fill("gpt-4o-mini\nclaude-sonnet-4");
  // The account's usable models and the site's groups are pickers: what was typed is ticked there.
  const picker = form.getByRole("group", { name: "可用模型" });
  await expect(picker.getByLabel("gpt-4o-mini", { exact: true })).toBeChecked();
  await expect(picker.getByLabel("claude-sonnet-4", { exact: true })).toBeChecked();
  await form.getByLabel("筛选模型").fill("claude");
  await expect(picker.getByLabel("gpt-4o-mini", { exact: true })).toHaveCount(0);
  await form.getByLabel("筛选模型").fill("");
  await picker.getByLabel("claude-sonnet-4", { exact: true }).uncheck();
  await expect(form.getByLabel("限用模型")).toHaveValue("gpt-4o-mini");
  await picker.getByLabel("claude-sonnet-4", { exact: true }).check();
  await expect(form.getByLabel("限用模型")).toHaveValue("gpt-4o-mini\nclaude-sonnet-4");
  await expect(form.getByLabel("分组").locator("option")).toContainText(["账户自己的分组"]);
  expect(await form.getByLabel("分组").locator("option", { hasText: "倍率 ×" }).count()).toBeGreaterThan(0);
  await shot(page, "43-token-form");
  await axeClean(page, "token form");
  await form.getByRole("button", { name: "创建" }).click();

  // The new key on request: the site's budget said first, then the key, copied and exported.
  const reveal = page.getByRole("dialog", { name: "令牌「脚本-e2e」的密钥" });
  await expect(reveal).toContainText("还剩 20 次");
  await reveal.getByRole("button", { name: "显示密钥" }).click();
  const key = reveal.getByLabel("密钥", { exact: true });
  await expect(key).toHaveValue(/^sk-[A-Za-z0-9]{48}$/);
  const full = await key.inputValue();
  await reveal.getByRole("button", { name: "复制密钥" }).click();
  await expect(reveal.getByRole("button", { name: "已复制" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(full);
  await expect(reveal.getByRole("link", { name: "在 Cherry Studio 中添加" })).toHaveAttribute(
    "href",
    /^cherrystudio:\/\/providers\/api-keys\?v=1&data=/,
  );
  await reveal.getByRole("tab", { name: "CC Switch" }).click();
  await expect(reveal.getByRole("link", { name: "导入为 Claude Code 供应商" })).toHaveAttribute(
    "href",
    /^ccswitch:\/\/v1\/import\?resource=provider&app=claude/,
  );
  await reveal.getByRole("tab", { name: ".env" }).click();
  await expect(reveal.locator("pre")).toContainText(`OPENAI_API_KEY=${full}`);
  await shot(page, "44-token-reveal");
  await axeClean(page, "reveal dialog");
  await page.keyboard.press("Escape");
  await expect(reveal).toHaveCount(0);

  // In the list: masked, limited to two models, $10.00 left; the full key is nowhere on the page.
  const row = panel.locator("tbody tr", { hasText: "脚本-e2e" });
  await expect(row).toContainText("限 2 个模型");
  await expect(row).toContainText("$10.00");
  expect(await page.content()).not.toContain(full.slice(3));

  await row.getByRole("button", { name: "停用令牌「脚本-e2e」" }).click();
  await expect(row.locator(".tag")).toHaveText("已禁用");

  await row.getByRole("button", { name: "编辑令牌「脚本-e2e」" }).click();
  const edit = page.getByRole("dialog", { name: "编辑令牌「脚本-e2e」" });
  await expect(edit.getByLabel("限用模型")).toHaveValue("gpt-4o-mini\nclaude-sonnet-4");
  await edit.getByLabel("名称").fill("这是一个十六个字的很长的令牌名称");
  await edit.getByRole("button", { name: "保存" }).click();
  const renamed = panel.locator("tbody tr", { hasText: "这是一个十六个字的很长的令牌名称" });
  await expect(renamed).toContainText("限 2 个模型");
  await expect(renamed.locator(".tag")).toHaveText("已禁用");
  // A 16-character name is cut short (whole on hover); the key stays on one line, also at 1100 px.
  for (const width of [1440, 1100]) {
    await page.setViewportSize({ width, height: 900 });
    const label = renamed.locator(".token-label");
    await expect(label).toHaveAttribute("title", "这是一个十六个字的很长的令牌名称");
    expect(await label.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    const key = renamed.locator("td.token-key code");
    const lineHeight = await key.evaluate((e) => parseFloat(getComputedStyle(e).lineHeight) || 20);
    expect((await key.boundingBox())?.height ?? 0).toBeLessThan(lineHeight * 1.5);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, "45-tokens");

  await renamed.getByRole("button", { name: "删除令牌「这是一个十六个字的很长的令牌名称」" }).click();
  const confirm = page.getByRole("dialog", { name: "删除令牌「这是一个十六个字的很长的令牌名称」？" });
  await confirm.getByRole("button", { name: "删除", exact: true }).click();
  await expect(panel.getByRole("status")).toHaveText("已删除 1 个令牌");
  await expect(renamed).toHaveCount(0);

  // 操作记录 on 概览: each step, never the key.
  await page.goto(`${URL_}/?tab=overview`);
  const records = page.getByRole("region", { name: "账户操作" }).locator(".audit-list li");
  await expect(records.first()).toContainText("删除令牌");
  await expect(records).toHaveCount(5);
  expect(await page.content()).not.toContain(full.slice(3));

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${URL_}/?tab=tokens`);
  await expect(panel.locator("tbody tr").first()).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "46-tokens-phone");
  await panel.getByRole("button", { name: "新建令牌" }).click();
  await expect(page.getByRole("dialog", { name: "新建令牌" })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "47-token-form-phone");
  await page.keyboard.press("Escape");

  // One click copies a key with its site's address, as a client asks for them.
  await page.setViewportSize({ width: 1440, height: 900 });
  const first = panel.locator("tbody tr").first();
  await first.getByRole("button", { name: /^复制令牌「.*」的地址和密钥$/ }).click();
  await expect(panel.getByRole("status")).toContainText("的地址和密钥");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(
    /^Base URL: http:\/\/127\.0\.0\.1:\d+\/v1\nAPI Key: sk-[A-Za-z0-9]{48}$/,
  );

  // 批量导出密钥: the account's tokens to choose from, masked; two chosen, their keys for each client.
  await panel.getByRole("button", { name: "批量导出密钥" }).click();
  const bulk = page.getByRole("dialog", { name: "批量导出密钥" });
  const boxes = bulk.getByRole("checkbox");
  await expect(boxes.first()).toBeVisible();
  await boxes.nth(0).check();
  await boxes.nth(1).check();
  await shot(page, "48-key-export-choose");
  await axeClean(page, "key export");
  await bulk.getByRole("button", { name: "导出所选（2）" }).click();
  await expect(bulk.getByRole("status")).toContainText("已取得 2 个密钥");
  const env = bulk.getByRole("tabpanel", { name: ".env" }).locator("pre");
  await expect(env).toContainText(/KEY_2_API_KEY=sk-[A-Za-z0-9]{48}/);
  await bulk.getByRole("tab", { name: "CC Switch" }).click();
  await expect(bulk.getByRole("link", { name: "Claude Code" }).first()).toHaveAttribute(
    "href",
    /^ccswitch:\/\/v1\/import/,
  );
  await shot(page, "49-key-export-result");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "49-key-export-result-phone");
});

/** Two tabs of one browser: each acts on the account it shows, whatever the other made active. */
test("a token made in a tab lands on the account that tab shows, after another tab switched accounts", async ({
  page,
  context,
}) => {
  const other = FAMILIES.find((x) => x.family === "one-hub")!;
  await page.goto(URL_);
  await fillSignIn(page, "令牌测试站点", KEYS.user.id, KEYS.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  // Tab A: this account's 令牌.
  await page.goto(`${URL_}/?tab=tokens`);
  const panel = page.getByRole("region", { name: "令牌", exact: true });
  await expect(panel.locator("tbody tr").first()).toBeVisible();
  const heading = await page.getByRole("heading", { level: 1 }).textContent();

  // Tab B adds the one-hub account, which becomes the browser's active one.
  const tabB = await context.newPage();
  await tabB.goto(`${URL_}/?add=1`);
  await fillSignIn(tabB, "one-hub 站点", other.user.id, other.user.token);
  await tabB.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(tabB)).toContainText("one-hub 用户");

  // Back in tab A, without a reload: the new token is made on the account tab A shows.
  await panel.getByRole("button", { name: "新建令牌" }).click();
  const form = page.getByRole("dialog", { name: "新建令牌" });
  await form.getByLabel("名称").fill("两个标签页");
  await form.getByRole("button", { name: "创建" }).click();
  await page.keyboard.press("Escape");
  await expect(panel.locator("tbody tr", { hasText: "两个标签页" })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading ?? "");

  // Tab B's account (one-hub) has no such token.
  await tabB.goto(`${URL_}/?tab=tokens`);
  const otherPanel = tabB.getByRole("region", { name: "令牌", exact: true });
  await expect(otherPanel.locator("tbody tr").first()).toBeVisible();
  await expect(otherPanel.locator("tbody tr", { hasText: "两个标签页" })).toHaveCount(0);
  await tabB.close();
});
