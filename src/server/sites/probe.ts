/**
 * Probing a site: its unauthenticated `GET /api/status` tells the gateway family, version, system
 * name and money settings (gateway-user-api.md §3.2, §8), stored with the site for an hour.
 */
import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { GatewayError, callSite, parseAnswer } from "../gateway/client";
import { profileFrom, type SiteProfile } from "../gateway/families";
import { SiteBusy, pauseSite, throughGate } from "../gateway/gate";
import { isRow } from "../gateway/reads";
import { processState, type StatePart } from "../core/process-state";
import { SiteError, siteRegistry, type ProfiledSite } from "./registry";

const PROFILE_MAX_AGE_MS = 60 * 60 * 1000;
/** After a failed probe, the next one waits this long (the stored profile serves meanwhile). */
const RETRY_PROBE_MS = 60 * 1000;
/**
 * This process's probes: when each site's last one failed, and those under way, shared by the
 * requests that need them (one call to the site, not one each).
 */
const PROBES: StatePart<{ failedAt: Map<string, number>; probing: Map<string, Promise<ProfiledSite | null>> }> = {
  name: "probes",
  create: () => ({ failedAt: new Map(), probing: new Map() }),
};

export type ProbeOptions = {
  timeoutMs: number;
  perMinute: number;
  maxWaitMs?: number;
  /** A workspace's own address: asked only on a public address (net/site-guard.ts). */
  guard?: boolean;
};

export type ProbeResult = { ok: true; ms: number; profile: SiteProfile } | { ok: false; ms: number; error: string };

/**
 * The gate key of an address not saved as a site: a budget of its own (a negative number, which
 * no site id is), so the probes of one address never hold back another's.
 */
const unsavedKey = (url: string): number => -(createHash("sha256").update(url).digest().readUInt32BE(0) + 1);

/** Asks a gateway at this address for its `/api/status`: what it is, or why it cannot be read. */
export async function probeUrl(url: string, opts: ProbeOptions, gateKey = unsavedKey(url)): Promise<ProbeResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let data: unknown;
  try {
    const answer = await throughGate(gateKey, opts, () =>
      callSite({
        siteUrl: url,
        path: "/api/status",
        timeoutMs: opts.timeoutMs,
        ...(opts.guard === undefined ? {} : { guard: opts.guard }),
      }),
    );
    if (answer.status === 429) {
      pauseSite(gateKey, answer.retryAfter);
      throw new SiteBusy(0);
    }
    data = parseAnswer(answer);
  } catch (error) {
    if (error instanceof SiteBusy) return { ok: false, ms: ms(), error: "站点繁忙，请稍后再试" };
    if (error instanceof GatewayError) return { ok: false, ms: ms(), error: error.message };
    throw error;
  }
  const envelope = isRow(data) ? data : {};
  if (envelope.success !== true || !isRow(envelope.data)) {
    return { ok: false, ms: ms(), error: "/api/status 没有返回站点状态" };
  }
  return { ok: true, ms: ms(), profile: profileFrom(envelope.data) };
}

/** Asks the site now and stores what it says and how it went; SiteError with the reason when it cannot be read. */
export async function probeSite(db: Db, siteId: number, opts: ProbeOptions): Promise<ProfiledSite> {
  const registry = siteRegistry(db);
  const site = await registry.find(siteId);
  if (!site) throw new SiteError(`站点不存在: ${siteId}`);
  const at = new Date();
  const result = await probeUrl(site.url, opts, site.id);
  await registry.saveHealth(site.id, { at, ok: result.ok, ms: result.ms, error: result.ok ? null : result.error });
  if (!result.ok) throw new SiteError(`站点探测失败: ${result.error}`);
  const saved = await registry.saveProfile(site.id, result.profile);
  if (!saved) throw new SiteError(`站点不存在: ${siteId}`);
  return saved;
}

/**
 * The site's profile, probed again when older than an hour. A probe that fails keeps the last
 * profile (or the unprobed defaults): the account's own calls then say what is wrong.
 */
export async function freshProfile(db: Db, siteId: number, opts: ProbeOptions): Promise<ProfiledSite | null> {
  const site = await siteRegistry(db).profiled(siteId);
  if (!site) return null;
  const now = Date.now();
  if (site.probedAt && now - site.probedAt.getTime() < PROFILE_MAX_AGE_MS) return site;
  // Keyed by address too: a site moved to another address is another gateway.
  const key = `${siteId} ${site.url}`;
  const { failedAt, probing } = processState().get(PROBES);
  if (now - (failedAt.get(key) ?? 0) < RETRY_PROBE_MS) return site;
  let running = probing.get(key);
  if (!running) {
    running = probeSite(db, siteId, opts)
      .then((probed) => {
        failedAt.delete(key);
        return probed;
      })
      .catch((error: unknown) => {
        if (!(error instanceof SiteError)) throw error;
        // Only failures of the last minute matter: the older leave as new ones come.
        if (failedAt.size >= 1_000) for (const [k, at] of failedAt) if (now - at >= RETRY_PROBE_MS) failedAt.delete(k);
        failedAt.set(key, now);
        return site;
      })
      .finally(() => probing.delete(key));
    probing.set(key, running);
  }
  return running;
}
