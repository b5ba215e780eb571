/**
 * Managing the sites in the browser (docs/design.md 15): the same validation as the CLI (the site
 * registry), a probe of `/api/status` before anything is saved (an unreachable site only on
 * explicit confirmation), each site's health, live sessions and ledger entries, and every change
 * in the audit log with what it was before and after.
 */
import type { Db } from "../db/client";
import { sessionStore } from "../session/store";
import { probeSite, probeUrl, type ProbeOptions, type ProbeResult } from "../sites/probe";
import { SiteError, normalizeSiteUrl, siteRegistry, type ProfiledSite } from "../sites/registry";
import { audit } from "./operator";
import type { MoveOutcome, ProbeFinding, AdminSiteRow } from "./schemas";
import { Refusal } from "../core/errors";

export type { MoveOutcome, ProbeFinding, AdminSiteRow } from "./schemas";

function findingOf(result: ProbeResult): ProbeFinding {
  if (!result.ok) return { reachable: false, ms: result.ms, error: result.error };
  const p = result.profile;
  return {
    reachable: true,
    ms: result.ms,
    family: p.family,
    version: p.version,
    systemName: p.systemName,
    quotaPerUnit: p.money.quotaPerUnit,
  };
}

/** A change that needs the operator's explicit yes: the site did not answer its probe. */
class NeedsConfirmation extends Refusal {
  constructor(message: string, finding: ProbeFinding) {
    super(message, undefined, undefined, { needsConfirmation: true, probe: finding });
  }
}

const snapshot = (s: { name: string; url: string; requestsPerMinute?: number | null }) => ({
  name: s.name,
  url: s.url,
  requestsPerMinute: s.requestsPerMinute ?? null,
});

/**
 * What site administration needs of the ledger, which lives above it (ledger/sites.ts provides
 * it): each site's entries, and setting a moved site's history apart.
 */
export type SiteLedger = {
  /** Entries kept per site id. */
  entriesBySite(): Promise<Map<number, number>>;
  /** Sets the site's ledger apart (it moved to another gateway); how many entries went with it. */
  archive(siteId: number, url: string): Promise<{ archiveId: number; entries: number }>;
};

export async function listSites(db: Db, ledger: SiteLedger, now = new Date()): Promise<AdminSiteRow[]> {
  const registry = siteRegistry(db);
  const [sites, health, sessions, entries] = await Promise.all([
    registry.listProfiled(true),
    registry.healthById(),
    sessionStore(db).liveCountsBySite(now),
    ledger.entriesBySite(),
  ]);
  return sites.map((s) => {
    const h = health.get(s.id);
    return {
      id: s.id,
      name: s.name,
      url: s.url,
      family: s.family,
      version: s.version,
      systemName: s.systemName,
      money: s.money,
      probedAt: s.probedAt?.toISOString() ?? null,
      health: h ? { ...h, at: h.at.toISOString() } : null,
      requestsPerMinute: s.requestsPerMinute,
      liveSessions: sessions.get(s.id) ?? 0,
      ledgerEntries: entries.get(s.id) ?? 0,
    };
  });
}

/**
 * How a change is made: `probe: false` saves without asking the address first (the CLI, where the
 * operator is at the server; the service probes the site when it first needs its profile).
 */
export type ChangeOptions = ProbeOptions & { probe?: boolean; ledger: SiteLedger };

/** Probes a URL before it is saved: what is there, or NeedsConfirmation unless `confirmed`; null when not probing. */
async function probed(url: string, confirmed: boolean, opts: ChangeOptions): Promise<ProbeResult | null> {
  if (opts.probe === false) return null;
  const result = await probeUrl(url, opts);
  if (!result.ok && !confirmed) {
    throw new NeedsConfirmation(`站点无法访问（${result.error}）；确认仍要保存时请勾选「仍然保存」`, findingOf(result));
  }
  return result;
}

export async function addSite(
  db: Db,
  input: { name: string; url: string; requestsPerMinute?: number | null; confirmUnreachable?: boolean },
  actor: string,
  opts: ChangeOptions,
): Promise<{ site: AdminSiteRow; probe: ProbeFinding | null }> {
  const registry = siteRegistry(db);
  const url = normalizeSiteUrl(input.url);
  await registry.addressFree(url);
  const result = await probed(url, input.confirmUnreachable === true, opts);
  const site = await registry.add({ name: input.name, url });
  if (input.requestsPerMinute !== undefined) await registry.setBudget(site.id, input.requestsPerMinute);
  if (result) await saveProbe(db, site.id, result);
  await audit(db, {
    action: "siteAdd",
    actor,
    siteId: site.id,
    after: snapshot({ ...site, requestsPerMinute: input.requestsPerMinute }),
  });
  return { site: await rowOf(db, site.id, opts.ledger), probe: result && findingOf(result) };
}

/** Stores what a probe found: the site's health, and its profile when it answered. */
async function saveProbe(db: Db, id: number, result: ProbeResult): Promise<void> {
  const registry = siteRegistry(db);
  await registry.saveHealth(id, {
    at: new Date(),
    ok: result.ok,
    ms: result.ms,
    error: result.ok ? null : result.error,
  });
  if (result.ok) await registry.saveProfile(id, result.profile);
}

/** What a move did: the sessions of the old address ended, and the ledger kept or set apart. */

/**
 * Whether the gateway at the new address is the one the site was: its probe must name the same
 * family and system name as the stored profile. Null when it agrees, else why not.
 */
function disagreement(before: ProfiledSite, result: ProbeResult): string | null {
  if (!before.probedAt) return "原站点从未探测成功，无法确认新地址是同一网关";
  if (!result.ok) return `新地址无法访问（${result.error}），无法确认是同一网关`;
  const p = result.profile;
  if (p.family !== before.family || p.systemName !== before.systemName) {
    const was = `${before.family}${before.systemName ? `「${before.systemName}」` : ""}`;
    const now = `${p.family}${p.systemName ? `「${p.systemName}」` : ""}`;
    return `新地址是 ${now}，原站点是 ${was}，不是同一网关`;
  }
  return null;
}

export async function editSite(
  db: Db,
  id: number,
  input: {
    name?: string;
    url?: string;
    requestsPerMinute?: number | null;
    confirmUnreachable?: boolean;
    /** The operator states the new address is the same gateway: its ledger stays (when the probe agrees). */
    sameGateway?: boolean;
  },
  actor: string,
  opts: ChangeOptions,
): Promise<{ site: AdminSiteRow; probe: ProbeFinding | null; move: MoveOutcome | null }> {
  const registry = siteRegistry(db);
  const before = await registry.profiled(id);
  if (!before) throw new SiteError(`站点不存在: ${id}`);
  const url = input.url === undefined ? undefined : normalizeSiteUrl(input.url);
  const moved = url !== undefined && url !== before.url;
  if (moved) await registry.addressFree(url, id);
  const sameGateway = moved && input.sameGateway === true;
  // A stated same gateway must answer; otherwise an unreachable address needs the confirmation.
  const result = moved
    ? await (sameGateway ? probeUrl(url, opts) : probed(url, input.confirmUnreachable === true, opts))
    : null;
  if (sameGateway && result) {
    const why = disagreement(before, result);
    if (why) throw new SiteError(`${why}；不勾选「同一网关」即可迁移，原账本将另行保存，新地址的用户无法读取`);
  }
  await registry.update(id, { name: input.name, url });
  let move: MoveOutcome | null = null;
  if (moved) {
    // Tokens were given for the old address: those sessions end, their users sign in again.
    const endedSessions = await sessionStore(db).endMovedAway(id, url);
    const archived = sameGateway ? null : await opts.ledger.archive(id, before.url);
    move = { endedSessions, ledger: archived ? "archived" : "kept", archivedEntries: archived?.entries ?? 0 };
  }
  if (input.requestsPerMinute !== undefined) await registry.setBudget(id, input.requestsPerMinute);
  if (result) await saveProbe(db, id, result);
  const after = await registry.profiled(id);
  await audit(db, {
    action: "siteEdit",
    actor,
    siteId: id,
    before: snapshot(before),
    after: after && { ...snapshot(after), ...(move ?? {}) },
  });
  return { site: await rowOf(db, id, opts.ledger), probe: result && findingOf(result), move };
}

/** Removes a site once confirmed; its sessions go on (`me` then answers without `site`). */
export async function removeSite(
  db: Db,
  id: number,
  confirmed: boolean,
  actor: string,
): Promise<{ removed: boolean; liveSessions: number }> {
  const registry = siteRegistry(db);
  const before = await registry.profiled(id);
  if (!before) throw new SiteError(`站点不存在: ${id}`);
  const liveSessions = await sessionStore(db).liveCount(id);
  if (!confirmed) return { removed: false, liveSessions };
  await registry.remove(id);
  await audit(db, { action: "siteRemove", actor, siteId: id, before: snapshot(before) });
  return { removed: true, liveSessions };
}

/** Probes saved sites now (one, or all side by side); each site's health is stored. */
export async function probeSites(db: Db, ids: number[], opts: ChangeOptions): Promise<AdminSiteRow[]> {
  await Promise.all(
    ids.map(async (id) => {
      try {
        await probeSite(db, id, opts);
      } catch (error) {
        // An unreachable site is a finding (its health says why), not a failure of the request.
        if (!(error instanceof SiteError)) throw error;
      }
    }),
  );
  const rows = await listSites(db, opts.ledger);
  return rows.filter((r) => ids.includes(r.id));
}

async function rowOf(db: Db, id: number, ledger: SiteLedger): Promise<AdminSiteRow> {
  const row = (await listSites(db, ledger)).find((r) => r.id === id);
  if (!row) throw new SiteError(`站点不存在: ${id}`);
  return row;
}
