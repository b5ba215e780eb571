import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dayIn } from "../../src/server/core/time";
import { ledgerStore, type EntryRow } from "../../src/server/ledger/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempSqlite, type TempDb } from "../support/db";
import { startFamilySite, type FamilySite } from "../support/families";
import { request, signInOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * A 1,000,000-row CSV export through the production server: streamed (many chunks), the server's
 * memory flat while it goes, every row there; a client that goes away stops the reading.
 */

const ROWS = 1_000_000;
let store: TempDb;
let site: FamilySite;
let app: RunningApp;
let auth: Record<string, string>;
const NOW = Math.floor(Date.now() / 1000);
let query = "";
let siteId = 0;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

beforeAll(async () => {
  store = tempSqlite();
  site = await startFamilySite("new-api", 0, {}, { days: 2 });
  const { id } = await siteRegistry(store.db).add({ name: "大站点", url: site.gateway.url });
  siteId = id;
  app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, LEDGER_SYNC_MINUTES: "0" });
  const { token } = await signInOverHttp(app.url, { userId: site.user.id, accessToken: site.user.token, siteId: id });
  auth = { authorization: `Bearer ${token}` };
  // A million entries over 30 days, written straight to the ledger.
  const owner = { siteId: id, siteUserId: site.user.id };
  await store.db.ledgerSync.create({ data: { siteId: id, siteUserId: BigInt(site.user.id), holder: "test" } });
  const span = 30 * 86_400;
  for (let start = 0; start < ROWS; start += 10_000) {
    const rows: EntryRow[] = [];
    for (let i = start; i < start + 10_000; i++) {
      rows.push({
        at: NOW - span + Math.floor((i * span) / ROWS),
        fingerprint: `f${i}`,
        ordinal: 0,
        type: "consume",
        model: ["gpt-4o", "claude-sonnet-4"][i % 2] as string,
        tokenName: "生产服务器",
        quota: 1000 + (i % 100),
        promptTokens: 500,
        completionTokens: 100,
        durationMs: 900,
        stream: i % 3 === 0,
        content: i % 1000 === 0 ? "说明, 含逗号" : "",
        detail: "",
      });
    }
    await ledgerStore(store.db).commit(owner, rows, "test", rows[rows.length - 1]!.at);
  }
  query = `from=${dayIn("UTC", (NOW - 31 * 86_400) * 1000)}&to=${dayIn("UTC", NOW * 1000)}&tz=UTC`;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await site?.gateway.close();
  await store?.cleanup();
});

describe("a million-row CSV export", () => {
  it("streams every row with the server's memory flat", async () => {
    const count = (await (await fetch(`${app.url}/api/export/count?${query}`, { headers: auth })).json()) as unknown;
    expect(count).toMatchObject({ success: true, data: { rows: ROWS } });
    const before = rssMb(app.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(app.pid))), 100);
    const res = await fetch(`${app.url}/api/export/usage.csv?${query}`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toContain("attachment;");
    let chunks = 0;
    let lines = 0;
    let bytes = 0;
    let halfway = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      chunks++;
      bytes += chunk.byteLength;
      for (const b of chunk) if (b === 10) lines++;
      if (halfway === 0 && lines >= ROWS / 2) halfway = peak;
    }
    clearInterval(sampler);
    console.log(`halfway peak ${Math.round(halfway)} MB`);
    console.log(
      `CSV export: ${ROWS} rows, ${Math.round(bytes / 2 ** 20)} MB in ${chunks} chunks; server RSS ${Math.round(before)} → peak ${Math.round(peak)} MB`,
    );
    expect(lines).toBe(ROWS + 1);
    expect(chunks).toBeGreaterThan(100);
    // Flat: what the second half of the rows adds is small, and the whole stays under 50 MB.
    expect(peak - halfway).toBeLessThan(10);
    expect(peak - before).toBeLessThan(50);
    // One log line for the export: who, the range, the rows; no token.
    await new Promise((r) => setTimeout(r, 200));
    const logged = app
      .output()
      .split("\n")
      .filter((l) => l.includes('"export.csv"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.map((l) => [typeof l.site, l.user, l.rows, l.complete])).toEqual([
      ["number", site.user.id, ROWS, true],
    ]);
    expect(JSON.stringify(logged)).not.toContain(site.user.token);
  }, 120_000);

  it("stops reading the store when the client goes away", async () => {
    const controller = new AbortController();
    const res = await fetch(`${app.url}/api/export/usage.csv?${query}`, { headers: auth, signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    controller.abort();
    let line: { rows: number; complete: boolean } | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const found = app
        .output()
        .split("\n")
        .filter((l) => l.includes('"export.csv"'))
        .map((l) => JSON.parse(l) as { rows: number; complete: boolean });
      line = found.find((l) => !l.complete);
    }
    expect(line?.complete).toBe(false);
    expect(line?.rows).toBeLessThan(ROWS / 10);
  }, 60_000);

  it("holds no snapshot while a download is left open: sign-out counts at once, sign-ins work, the download stops", async () => {
    const mine = await signInOverHttp(app.url, { userId: site.user.id, accessToken: site.user.token, siteId });
    const headers = { authorization: `Bearer ${mine.token}` };
    const res = await fetch(`${app.url}/api/export/usage.csv?${query}`, { headers });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    // The client stops reading; the download stays open.
    expect((await request(app.url, "/api/auth/logout", { method: "POST", headers })).body).toEqual({ success: true });
    expect((await request(app.url, "/api/auth/me", { headers })).status).toBe(401);
    expect((await request(app.url, "/api/export/count?" + query, { headers })).status).toBe(401);
    // Other people's sign-ins (which write their attempt counters) go through meanwhile.
    const other = await request(app.url, "/api/auth/login", {
      body: { userId: site.user.id, accessToken: site.user.token, siteId },
    });
    expect([other.status, other.body.success]).toEqual([200, true]);
    // Read on: the download ends short of the ledger, and says it did not complete.
    let lines = 0;
    let failed = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const b of value) if (b === 10) lines++;
      }
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    expect(lines).toBeLessThan(ROWS / 2);
  }, 60_000);
});
