import { describe, expect, it } from "vitest";
import { editSite } from "../../src/server/admin/sites";
import { syncDueLedgers } from "../../src/server/jobs/ledger";
import { siteLedger } from "../../src/server/ledger/sites";
import { siteRegistry } from "../../src/server/sites/registry";
import type { RunningGateway, StandInFamily } from "../../src/demo/gateway";
import { bearer, callerFor } from "../support/caller";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";

/**
 * A site moved to another address (the third security round): the access tokens given for the old
 * address never go to the new one, and the old gateway's history is nobody's at the new one unless
 * the operator says it is the same gateway and the probe agrees.
 */

let store: TempDb;
const open: FamilySite[] = [];
const NOW = Math.floor(Date.now() / 1000);
const OPTS = { timeoutMs: 5000, perMinute: 100_000 };
const opts = () => ({ ...OPTS, ledger: siteLedger(store.db) });
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
const RANGE = { from: day(NOW - 20 * 86_400), to: day(NOW), tz: "UTC" };

freshStorePerTest((s) => (store = s), open);

/**
 * A stand-in of a family whose user 201 has the history `seed` makes: two gateways of different
 * seeds have a user 201 each, the same id and another person; one of the same seed is the same
 * gateway served at a second address.
 */
async function gateway(family: StandInFamily, seed: number): Promise<FamilySite> {
  const site = await startFamilySite(family, 0, {}, { days: 5, now: NOW - 60, seed });
  open.push(site);
  return site;
}

/** Requests a gateway saw that carried this access token. */
const carrying = (g: RunningGateway, token: string) =>
  g.requests.filter((r) => r.headers.authorization === token).length;

async function ledgerCount(token: string): Promise<number> {
  const status = await callerFor(store.db, bearer(token)).api.usage.status();
  return status.entries;
}

describe("moving a site to another address", () => {
  it("ends the old address's sessions: their tokens never reach the new address, nor does the background sync", async () => {
    const old = await gateway("new-api", 100);
    const next = await gateway("new-api", 101);
    const { id } = await siteRegistry(store.db).add({ name: "搬家站点", url: old.gateway.url });
    const alice = await signInAndSync(store.db, id, old.user, NOW);
    const move = await editSite(store.db, id, { url: next.gateway.url }, "test", opts());
    expect(move.move).toMatchObject({ endedSessions: 1, ledger: "archived" });

    // The session is gone: every read is refused, and nothing carrying the token reached the new address.
    await expect(callerFor(store.db, bearer(alice.token)).api.auth.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(callerFor(store.db, bearer(alice.token)).api.account.summary({})).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await syncDueLedgers(store.db, { syncMinutes: 1, keepDays: 400, backfillDays: 5, ...OPTS }, Date.now() + 3600_000);
    expect(carrying(next.gateway, old.user.token)).toBe(0);
  });

  it("refuses to send a session's token to an address the site moved to behind its back", async () => {
    const old = await gateway("new-api", 100);
    const next = await gateway("new-api", 101);
    const { id } = await siteRegistry(store.db).add({ name: "搬家站点", url: old.gateway.url });
    const alice = await signInAndSync(store.db, id, old.user, NOW);
    // Not through the admin operations: the registry changed directly (another instance, an old build).
    await store.db.site.update({ where: { id }, data: { url: next.gateway.url } });
    await expect(callerFor(store.db, bearer(alice.token)).api.account.summary({})).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    expect(carrying(next.gateway, old.user.token)).toBe(0);
  });

  it("sets the old gateway's history apart: user 201 of the new gateway reads none of user 201 of the old", async () => {
    const old = await gateway("new-api", 100);
    const next = await gateway("one-hub", 101);
    const { id } = await siteRegistry(store.db).add({ name: "搬家站点", url: old.gateway.url });
    const before = await signInAndSync(store.db, id, old.user, NOW);
    const kept = await ledgerCount(before.token);
    expect(kept).toBeGreaterThan(0);

    const result = await editSite(store.db, id, { url: next.gateway.url }, "test", opts());
    expect(result.move).toEqual({ endedSessions: 1, ledger: "archived", archivedEntries: kept });
    const newcomer = await callerFor(store.db).api.auth.login({
      userId: 201,
      accessToken: next.user.token,
      siteId: id,
    });
    if (!newcomer.success) throw new Error(newcomer.message);
    const api = callerFor(store.db, bearer(newcomer.data.sessionToken)).api;
    expect(await ledgerCount(newcomer.data.sessionToken)).toBe(0);
    const summary = await api.usage.summary(RANGE);
    expect(summary).toMatchObject({ success: true, data: { totals: { requests: 0 } } });
    const count = await api.export.count(RANGE);
    expect(count).toMatchObject({ success: true, data: { rows: 0 } });
    // The old history still exists, apart.
    expect(await store.db.ledgerArchive.findMany({ select: { siteId: true, url: true, entries: true } })).toEqual([
      { siteId: id, url: old.gateway.url, entries: kept },
    ]);
  });

  it("keeps the ledger when the operator says it is the same gateway and the probe agrees; refuses when it does not", async () => {
    const old = await gateway("new-api", 100);
    const other = await gateway("one-hub", 101);
    const { id } = await siteRegistry(store.db).add({ name: "搬家站点", url: old.gateway.url });
    const before = await signInAndSync(store.db, id, old.user, NOW);
    const kept = await ledgerCount(before.token);

    // Another gateway (one-hub) is not the same one: refused, nothing changed.
    await expect(editSite(store.db, id, { url: other.gateway.url, sameGateway: true }, "test", opts())).rejects.toThrow(
      /不是同一网关/,
    );
    expect((await siteRegistry(store.db).find(id))?.url).toBe(old.gateway.url);
    expect(await ledgerCount(before.token)).toBe(kept);

    // The same gateway at a second address of its own: kept.
    const sameUrl = (await gateway("new-api", 100)).gateway.url;
    const result = await editSite(store.db, id, { url: sameUrl, sameGateway: true }, "test", opts());
    expect(result.move).toEqual({ endedSessions: 1, ledger: "kept", archivedEntries: 0 });
    const again = await callerFor(store.db).api.auth.login({ userId: 201, accessToken: old.user.token, siteId: id });
    if (!again.success) throw new Error(again.message);
    expect(await ledgerCount(again.data.sessionToken)).toBe(kept);
    const audit = await store.db.auditEntry.findMany({ where: { action: "siteEdit" }, select: { after: true } });
    expect(JSON.parse(audit.at(-1)?.after ?? "{}")).toMatchObject({ url: sameUrl, ledger: "kept", endedSessions: 1 });
  });
});
