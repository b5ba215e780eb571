import type { RunningGateway } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { freePort } from "./server";
import { tempStore, type TempDb } from "./db";
import { startLegacyGateway, startStrictGateway } from "./gateway";
import type { Sites } from "./cases";

export type Fixture = {
  store: TempDb;
  strict: RunningGateway;
  legacy: RunningGateway;
  sites: Sites;
  /** Requests both gateways have seen. */
  gatewayCalls: () => number;
  close: () => Promise<void>;
};

/** A fresh store with three registered sites: a strict new-api, an older one-api, and a dead address. */
export async function startFixture(): Promise<Fixture> {
  const store = await tempStore();
  const [strict, legacy] = await Promise.all([startStrictGateway(), startLegacyGateway()]);
  const registry = siteRegistry(store.db);
  const s1 = await registry.add({ name: "严格站点", url: strict.url });
  const s2 = await registry.add({ name: "旧版站点", url: `${legacy.url}/` });
  const s3 = await registry.add({ name: "失联站点", url: `http://127.0.0.1:${await freePort()}` });
  return {
    store,
    strict,
    legacy,
    sites: { strict: s1.id, legacy: s2.id, unreachable: s3.id },
    gatewayCalls: () => strict.requests.length + legacy.requests.length,
    close: async () => {
      await Promise.all([strict.close(), legacy.close()]);
      await store.cleanup();
    },
  };
}
