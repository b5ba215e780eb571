import { ACTING, E2E_REDEEM_CODE, URL_, activeAccount, expect, fillSignIn, shot, test } from "./fixtures";

/** 账户操作 on 概览: check in, redeem a code (a wrong one explained first), the record of both; on a phone too. */
test("checks in, redeems a code and keeps the record, at desktop and phone width", async ({ page }) => {
  await page.goto(URL_);
  await fillSignIn(page, "操作测试站点", ACTING.user.id, ACTING.user.token);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(activeAccount(page)).toContainText("new-api 用户");
  await page.goto(`${URL_}/?tab=overview`);
  const actions = page.getByRole("region", { name: "账户操作" });
  const balance = page.getByRole("region", { name: "额度" });
  const stat = balance.locator(".stat-value").first();
  await expect(stat).toBeVisible();
  const shown = async () => Number(((await stat.textContent()) ?? "").replace(/[$,]/g, ""));

  // Check-in: available, done once, then said to be done.
  const checkin = actions.getByRole("button", { name: "签到", exact: true });
  await checkin.click();
  await expect(actions.getByRole("status").filter({ hasText: "签到成功" })).toHaveText("签到成功，获得 $0.0096");
  await expect(actions).toContainText("今天已签到");
  await expect(actions).toContainText("本月已签到 1 天");
  await expect(checkin).toHaveCount(0);

  // A wrong code: new-api's one sentence explained; then the right one adds $10 to the balance shown.
  await page.reload();
  await expect(stat).toBeVisible();
  const before = await shown();
  const code = actions.getByLabel("兑换码", { exact: true });
  await code.fill("NOT-A-REAL-CODE");
  await actions.getByRole("button", { name: "兑换" }).click();
  await expect(actions.getByRole("alert")).toContainText("兑换失败：站点没有说明原因");
  await code.fill(E2E_REDEEM_CODE);
  await actions.getByRole("button", { name: "兑换" }).click();
  await expect(actions.getByRole("status").filter({ hasText: "兑换成功" })).toHaveText("兑换成功，增加 $10.00");
  await expect(code).toHaveValue("");
  await expect.poll(shown).toBeCloseTo(before + 10, 2);

  // The record: newest first, never the code.
  const records = actions.locator(".audit-list li");
  await expect(records).toHaveCount(3);
  await expect(records.first()).toContainText("兑换成功，增加 $10.00");
  expect(await actions.textContent()).not.toContain(E2E_REDEEM_CODE);
  await shot(page, "40-account-actions");

  // 全部签到 on 全部账户: each account's outcome (this one was done today).
  await page.goto(URL_);
  const overview = page.getByRole("region", { name: "全部账户" });
  await overview.getByRole("button", { name: "全部签到" }).click();
  const outcome = overview.getByRole("status", { name: "全部签到的结果" });
  await expect(outcome).toContainText("今天已签过");
  await expect(outcome).toContainText("操作测试站点 · new-api 用户");
  await shot(page, "42-checkin-all");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${URL_}/?tab=overview`);
  await expect(actions.locator(".audit-list li")).toHaveCount(3);
  expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
  await shot(page, "41-account-actions-phone");
});
