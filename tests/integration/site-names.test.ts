import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { readersOf } from "../../src/server/ledger/analytics";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { signInWith } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/** Two sites of one name are told apart wherever accounts are named by their sites. */

let store: TempDb;
const gateways: RunningGateway[] = [];

beforeAll(async () => {
  store = await tempStore();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await store.cleanup();
});

async function signedInOn(name: string, userId: number) {
  const token = `same-name-token-${userId}-0123456789`;
  const gateway = await startGateway({ family: "new-api", users: [{ accessToken: token, data: newApiUser(userId) }] });
  gateways.push(gateway);
  const { id } = await siteRegistry(store.db).add({ name, url: gateway.url });
  const { token: session } = await signInWith(store.db, id, { id: userId, token });
  const live = await sessionStore(store.db).findValid(session);
  if (!live) throw new Error("no session");
  return { live, host: new URL(gateway.url).host };
}

describe("two sites of one name", () => {
  it("are named with their addresses; a name of its own stays as it is", async () => {
    const a = await signedInOn("演示站点", 41);
    const b = await signedInOn("演示站点", 42);
    const c = await signedInOn("另一个站", 43);
    const names = (await readersOf(store.db, [a.live, b.live, c.live])).map((r) => r.site?.name);
    expect(names).toEqual([`演示站点（${a.host}）`, `演示站点（${b.host}）`, "另一个站"]);
  });
});
