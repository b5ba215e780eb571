import { ALICE } from "../support/gateway";
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
  const family = FAMILIES[0];
  if (!family) throw new Error("no family site");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${URL_}/workspace?create=1`);
  await expect(page.getByRole("heading", { name: "创建工作区" })).toBeVisible();
  await page.getByLabel("工作区名称").fill("端到端工作区");
  await page.getByLabel("密码", { exact: true }).fill("e2e workspace password");
  await page.getByLabel("再输入一次密码").fill("e2e workspace password");
  await page.getByRole("button", { name: "创建并登录" }).click();

  // A new workspace asks for its first account; each is verified with its site, then saved.
  await expect(page.getByRole("heading", { name: "添加账户" })).toBeVisible();
  await expect(page.getByText("工作区 · 端到端工作区")).toBeVisible();
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
  await expect(page.getByRole("button", { name: /^打开 / })).toHaveCount(2);
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
  void consoleErrors;
});
