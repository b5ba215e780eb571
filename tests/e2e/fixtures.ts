import { test as base, expect, type Page } from "@playwright/test";
import type { StandInFamily } from "../../src/demo/gateway";
import type { History } from "../../src/demo/history";

export const URL_ = process.env.E2E_URL ?? "";
export const EMPTY_URL = process.env.E2E_EMPTY_URL ?? "";
export const SITES = JSON.parse(process.env.E2E_SITES ?? "{}") as {
  strict: number;
  legacy: number;
  unreachable: number;
  removable: number;
};

export { E2E_ADMIN_PASSWORD, E2E_REDEEM_CODE } from "./constants";

/** The account of the site kept for the writes (check-in on, one code). */
export const ACTING = JSON.parse(process.env.E2E_ACTING ?? "{}") as { user: { id: number; token: string } };
export const KEYS = JSON.parse(process.env.E2E_KEYS ?? "{}") as { user: { id: number; token: string } };
/** The new-api account with a daily plan (套餐). */
export const PLAN = JSON.parse(process.env.E2E_PLAN ?? "{}") as { user: { id: number; token: string } };

/** The stand-in site of every gateway family (`<family> 站点`), its user and the history it serves. */
export const FAMILIES = JSON.parse(process.env.E2E_FAMILIES ?? "[]") as {
  family: StandInFamily;
  url: string;
  user: { id: number; token: string };
  totals: History["totals"];
  /** The `content` of the newest log entries: those of the newest second (one second's entries come in either order). */
  newest: string[];
  /** The full keys of the user's tokens (none may reach the page). */
  tokenKeys: string[];
}[];

// The per-family tests are listed from this: without it they would silently not exist.
if (FAMILIES.length === 0)
  throw new Error("E2E_FAMILIES is empty: the global setup has not run before this module was loaded");

/** A page that records console errors and failed requests; every test ends by asserting none. */
export const test = base.extend<{ consoleErrors: string[] }>({
  consoleErrors: async ({ page }, use) => {
    const errors: string[] = [];
    page.on("console", (m) => {
      // "Failed to load resource" names no address: say which one.
      if (m.type() === "error") errors.push(m.location().url ? `${m.text()} (${m.location().url})` : m.text());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    await use(errors);
    expect(errors, "console errors").toEqual([]);
  },
});

export { expect };

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `test-results/screens/${name}.png`, fullPage: true });
}

export async function fillSignIn(page: Page, site: string, userId: string | number, token: string): Promise<void> {
  await page.getByLabel("站点").selectOption({ label: site });
  await page.getByLabel("用户ID").fill(String(userId));
  await page.getByLabel("访问令牌", { exact: true }).fill(token);
}

/** The active account as the account menu names it (the page's heading is the person's on 全部账户). */
export const activeAccount = (page: Page) => page.getByRole("region", { name: "账户切换" }).locator("summary");
