import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, FAMILIES, URL_, activeAccount, expect, fillSignIn, test } from "./fixtures";

/**
 * WCAG 2.2 AA as axe checks it, on every page at a desktop's and a phone's width, in the light and
 * the dark theme: any serious or critical finding fails, named with where it is.
 */

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

async function checkPage(page: Page, name: string) {
  // Nothing still loading: the finished page is what people read.
  await expect(page.locator("[aria-busy=true], .state:has-text('读取中'), .state:has-text('正在')")).toHaveCount(0, {
    timeout: 15_000,
  });
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} @ ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
  expect.soft(serious, name).toEqual([]);
}

const TABS = ["", "?tab=overview", "?tab=logs", "?tab=tokens", "?tab=topups", "?tab=usage", "?tab=prices"];

for (const scheme of ["light", "dark"] as const) {
  for (const [label, viewport] of [
    ["desktop", { width: 1440, height: 900 }],
    ["phone", { width: 390, height: 844 }],
  ] as const) {
    test(`every page passes axe (WCAG 2.2 AA) on a ${label} in the ${scheme} theme`, async ({ page }) => {
      test.setTimeout(120_000);
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(viewport);

      await page.goto(URL_);
      await checkPage(page, "sign-in");
      const f = FAMILIES.find((x) => x.family === "new-api")!;
      await fillSignIn(page, "new-api 站点", f.user.id, f.user.token);
      await page.getByRole("button", { name: "登录" }).click();
      await expect(activeAccount(page)).toContainText("new-api 用户");
      for (const tab of TABS) {
        await page.goto(`${URL_}/${tab}`);
        if (tab === "?tab=usage")
          await expect(page.getByLabel("账本同步")).toContainText("上次同步", { timeout: 30_000 });
        if (tab === "?tab=prices")
          await expect(page.getByRole("region", { name: "如果在别处", exact: true }).locator("table")).toBeVisible({
            timeout: 30_000,
          });
        await checkPage(page, tab || "accounts");
      }
      // The account menu open, and an entry of the log open.
      await page.goto(`${URL_}/?tab=logs`);
      await page.getByRole("region", { name: "使用日志", exact: true }).locator("tbody button").first().click();
      await checkPage(page, "log entry");
      await page.getByRole("region", { name: "账户切换" }).locator("summary").click();
      await checkPage(page, "account menu");
      await page.goto(`${URL_}/?add=1`);
      await checkPage(page, "add account");

      await page.goto(`${URL_}/workspace`);
      await checkPage(page, "workspace sign-in");
      await page.goto(`${URL_}/statement/${"x".repeat(43)}`);
      await expect(page.getByRole("status")).toContainText("链接无效");
      await checkPage(page, "statement link");
      await page.goto(`${URL_}/admin`);
      await checkPage(page, "admin sign-in");
      await page.getByLabel("管理员密码").fill(E2E_ADMIN_PASSWORD);
      await page.getByRole("button", { name: "登录" }).click();
      await expect(page.getByRole("heading", { name: "站点管理", level: 1 })).toBeVisible();
      await checkPage(page, "admin");
    });
  }
}

test("the theme switch: dark, light or the system's, remembered across a reload", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(URL_);
  const html = page.locator("html");
  const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const light = await background();
  const theme = page.getByLabel("外观");
  await expect(theme).toHaveValue("system");
  // (Chosen again until the page's script runs: a choice made before it is not taken.)
  await expect(async () => {
    await theme.selectOption({ label: "深色" });
    await expect(html).toHaveAttribute("data-theme", "dark", { timeout: 500 });
  }).toPass();
  const dark = await background();
  expect(dark).not.toBe(light);
  await page.reload();
  await expect(html).toHaveAttribute("data-theme", "dark");
  await expect(page.getByLabel("外观")).toHaveValue("dark");
  expect(await background()).toBe(dark);
  // Following the system: dark when the system is.
  await page.getByLabel("外观").selectOption({ label: "跟随系统" });
  await expect(html).not.toHaveAttribute("data-theme");
  await page.emulateMedia({ colorScheme: "dark" });
  expect(await background()).toBe(dark);
  await page.reload();
  expect(await background()).toBe(dark);
  await page.emulateMedia({ colorScheme: "light" });
  expect(await background()).toBe(light);
});
