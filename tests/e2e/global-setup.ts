import { siteRegistry } from "../../src/server/sites/registry";
import { tempSqlite } from "../support/db";
import { startApp } from "../support/server";
import { startFixture } from "../support/suite";

/**
 * One production server on a store with the stand-in sites, and one on an empty store.
 * Their addresses reach the tests through the environment; the returned function stops all.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const fx = await startFixture();
  const empty = tempSqlite();
  const env = { SITE_TIMEOUT_MS: "2000", LOGIN_RATE_LIMIT: "0" };
  const [app, emptyApp] = await Promise.all([
    startApp({ ...env, DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir }),
    startApp({ ...env, DATABASE_URL: empty.url, DATA_DIR: empty.dir }),
  ]);
  const removable = await siteRegistry(fx.store.db).add({ name: "即将移除的站点", url: fx.legacy.url });
  process.env.E2E_URL = app.url;
  process.env.E2E_EMPTY_URL = emptyApp.url;
  process.env.E2E_DB_URL = fx.store.url;
  process.env.E2E_SITES = JSON.stringify({ ...fx.sites, removable: removable.id });
  return async () => {
    await Promise.all([app.stop(), emptyApp.stop()]);
    await Promise.all([fx.close(), empty.cleanup()]);
  };
}
