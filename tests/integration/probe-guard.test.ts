import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * A workspace's probe with private addresses refused (the default): a literal internal address
 * is refused before any site budget is spent on it, in the same words whatever its port, so a
 * workspace cannot spend the budget of the addresses it may not reach, nor tell which ports answer.
 */
let store: TempDb;
beforeAll(async () => {
  store = await tempStore();
});
afterAll(() => store?.cleanup());

describe("a probe of a literal internal address", () => {
  it("is refused before the budget: a budget of one call a minute answers every such probe alike", async () => {
    const anon = callerFor(store.db, {}, { clientAddress: "203.0.113.9" }).api;
    const token = (await anon.workspace.register({ name: "内网探测", password: "correct horse battery" })).data.token;
    const api = callerFor(store.db, bearer(token), { timeoutMs: 1000, siteRequestsPerMinute: 1 }).api;
    const urls = [
      "http://127.0.0.1:9",
      "http://127.0.0.1:22",
      "http://[::1]:80",
      "http://10.0.0.1",
      "http://0x7f.1:8080",
    ];
    const answers = [];
    for (const url of [...urls, ...urls]) answers.push(await api.workspace.probeSite({ url }));
    const messages = new Set(answers.map((a) => (a.success ? "saved" : a.message)));
    expect([...messages]).toEqual([expect.stringContaining("站点地址指向内网、本机或保留地址")]);
  });
});
