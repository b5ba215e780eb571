import { describe, expect, it } from "vitest";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * Keys in bulk across a workspace's accounts (docs/design.md 26): every account's tokens listed
 * masked for choosing; the chosen keys (or every enabled one) revealed as 显示密钥 reveals one, in
 * 操作记录, and written out as .env, JSON and the clients' import links.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

async function workspaceWithTwo() {
  const sites = [await startFamilySite("new-api", 0), await startFamilySite("one-hub", 1)];
  open.push(...sites);
  const anon = callerFor(store.db, {}, { clientAddress: "198.51.100.40" }).api;
  const made = await anon.workspace.register({ name: "密钥工作区", password: "correct horse battery" });
  const api = callerFor(store.db, bearer(made.data.token)).api;
  const keys: string[] = [];
  for (const [i, site] of sites.entries()) {
    const { id } = await siteRegistry(store.db).add({ name: `站点${i + 1}`, url: site.gateway.url });
    const saved = await api.workspace.addAccount({ siteId: id, userId: site.user.id, accessToken: site.user.token });
    if (!saved.success) throw new Error(saved.message);
    keys.push(`${id}:${site.user.id}`);
  }
  return { api, sites, keys };
}

describe("tokens.exportKeys", () => {
  it("lists every account's tokens, and gives the chosen keys for the clients, each reveal recorded", async () => {
    const { api, sites, keys } = await workspaceWithTwo();
    const listed = await api.tokens.everyAccount();
    expect(listed.data.accounts.map((a) => a.account)).toEqual(keys);
    for (const [i, account] of listed.data.accounts.entries()) {
      const ids = sites[i]!.history.tokens.filter((t) => !t.deleted).map((t) => t.id);
      expect(account.tokens?.map((t) => t.id).sort()).toEqual(ids.sort());
      // Masked in the list: the full key is not there.
      for (const t of sites[i]!.history.tokens) expect(JSON.stringify(account)).not.toContain(t.key);
    }

    // Two keys of the first account and one of the second, in that order.
    const first = sites[0]!.history.tokens.slice(0, 2);
    const second = sites[1]!.history.tokens[0]!;
    const answer = await api.tokens.exportKeys({
      keys: [
        { account: keys[0]!, ids: first.map((t) => t.id) },
        { account: keys[1]!, ids: [second.id] },
      ],
    });
    const { data } = answer;
    expect(data.failed).toEqual([]);
    expect(data.keys.map((k) => k.key)).toEqual([...first.map((t) => `sk-${t.key}`), `sk-${second.key}`]);
    expect(data.env).toContain(`OPENAI_BASE_URL=${sites[0]!.gateway.url}/v1\nOPENAI_API_KEY=sk-${first[0]!.key}`);
    expect(data.env).toContain(`KEY_3_BASE_URL=${sites[1]!.gateway.url}/v1\nKEY_3_API_KEY=sk-${second.key}`);
    expect((JSON.parse(data.json) as { apiKey: string }[]).map((k) => k.apiKey)).toEqual(data.keys.map((k) => k.key));
    expect(data.keys[0]!.ccSwitch.claude).toMatch(/^ccswitch:\/\/v1\/import\?resource=provider&app=claude/);
    expect(data.keys[0]!.cherryStudio).toMatch(/^cherrystudio:\/\/providers\/api-keys\?v=1&data=/);
    // Each reveal is in its account's 操作记录, without the key.
    const records = await api.actions.records({});
    const messages = records.data.items.map((r) => r.message);
    for (const t of first) expect(messages).toContain(`查看令牌「${t.name}」的密钥：成功`);
    expect(JSON.stringify(records.data)).not.toContain(first[0]!.key);
  });

  it("takes every enabled token with all, refuses an account that is not the workspace's, and more than 50 keys", async () => {
    const { api, sites, keys } = await workspaceWithTwo();
    const enabled = sites.flatMap((s) => s.history.tokens.filter((t) => !t.deleted && t.status === 1));
    const all = await api.tokens.exportKeys({ keys: "all" });
    expect(all.data.keys.map((k) => k.key).sort()).toEqual(enabled.map((t) => `sk-${t.key}`).sort());
    await expect(api.tokens.exportKeys({ keys: [{ account: "999:1", ids: [1] }] })).rejects.toThrow(
      "所选的账户不在这里",
    );
    const many = Array.from({ length: 51 }, (_, i) => i + 1);
    await expect(api.tokens.exportKeys({ keys: [{ account: keys[0]!, ids: many }] })).rejects.toThrow(
      "一次最多导出 50 个密钥，这次选了 51 个",
    );
  });

  it("refuses a key holding a line break and a variable, and gives the others; names never start a line", async () => {
    const { api, sites, keys } = await workspaceWithTwo();
    const [honest, hostile] = sites[0]!.history.tokens;
    // The site's "key": a line break, then a variable pointing the honest key's client elsewhere.
    hostile!.key = `abc\nOPENAI_BASE_URL=https://attacker.example/v1`;
    hostile!.name = "名字\nOPENAI_API_KEY=evil";
    const answer = await api.tokens.exportKeys({ keys: [{ account: keys[0]!, ids: [honest!.id, hostile!.id] }] });
    expect(answer.data.keys.map((k) => k.tokenId)).toEqual([honest!.id]);
    expect(answer.data.failed.map((f) => f.tokenId)).toEqual([hostile!.id]);
    expect(answer.data.failed[0]?.message).toContain("密钥以外的字符");
    expect(answer.data.env).not.toContain("attacker.example");
    // Each line of the .env is a comment, a blank or one NAME=value.
    for (const line of answer.data.env.split("\n")) expect(line).toMatch(/^(#.*|[A-Z0-9_]+=\S*|)$/);
  });
});
