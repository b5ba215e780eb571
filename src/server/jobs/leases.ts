/**
 * Leases of background jobs (docs/design.md 18): one run of a job at a time across every instance on
 * the store, a periodic job once per period however many instances look, and a holder that dies
 * loses its lease within `JOB_LEASE_SECONDS`. A job of the whole deployment is named by itself
 * (`ledger.prune`); a job of one account by its kind and the account (`checkin:12`).
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import { doLeftOvers, leaveForLater } from "../core/left-over";
import { processState, type StatePart } from "../core/process-state";

/** The leases this process holds now, by job name: released when it stops (registry.stopJobs). */
const HELD: StatePart<Map<string, string>> = { name: "job-leases", create: () => new Map() };

export type LeaseOptions = {
  /** How long the lease lasts without renewal (it is renewed every third of it while the job runs). */
  leaseMs: number;
  /** A periodic job: claimed only when its last finished run is this long ago. */
  everyMs?: number;
};

export function jobLeases(db: Db) {
  return {
    /** Takes the job's lease for `holder` when it is free (and due); false when it is not. */
    async claim(name: string, holder: string, opts: LeaseOptions, now = new Date()): Promise<boolean> {
      const free = [{ holder: null }, { leaseUntil: null }, { leaseUntil: { lt: now } }];
      const due =
        opts.everyMs === undefined
          ? {}
          : { OR: [{ ranAt: null }, { ranAt: { lte: new Date(now.getTime() - opts.everyMs) } }] };
      const take = async () => {
        const { count } = await db.jobLease.updateMany({
          where: { name, AND: [{ OR: free }, due] },
          data: { holder, leaseUntil: new Date(now.getTime() + opts.leaseMs) },
        });
        return count === 1;
      };
      if (await take()) return true;
      // The job's first claim makes its row, held; two at once: the other one made it (a unique violation).
      try {
        await db.jobLease.create({
          data: { name, holder, leaseUntil: new Date(now.getTime() + opts.leaseMs) },
          select: { name: true },
        });
        return true;
      } catch (error) {
        if ((error as { code?: string }).code !== "P2002") throw error;
        return false;
      }
    },

    /** Extends the lease while `holder` has it; false when it was lost (expired and taken). */
    async renew(name: string, holder: string, leaseMs: number): Promise<boolean> {
      const { count } = await db.jobLease.updateMany({
        where: { name, holder },
        data: { leaseUntil: new Date(Date.now() + leaseMs) },
      });
      return count === 1;
    },

    /** Lets go of the lease; `ran` notes a finished run (the period starts again). */
    async release(name: string, holder: string, ran: boolean): Promise<void> {
      await db.jobLease.updateMany({
        where: { name, holder },
        data: { holder: null, leaseUntil: null, ...(ran ? { ranAt: new Date() } : {}) },
      });
    },
  };
}

/**
 * Runs `run` under the job's lease: nothing when another instance holds it (or, periodic, it ran
 * within its period); the lease is renewed while it runs and released after, a finished run noted.
 * Returns whether it ran. A run that throws is not noted as finished (it is tried at the next look).
 */
export async function runLeased(db: Db, name: string, opts: LeaseOptions, run: () => Promise<void>): Promise<boolean> {
  const leases = jobLeases(db);
  const holder = randomUUID();
  if (!(await leases.claim(name, holder, opts))) return false;
  const held = processState().get(HELD);
  held.set(name, holder);
  const heartbeat = setInterval(
    () => void leases.renew(name, holder, opts.leaseMs).catch(() => false),
    opts.leaseMs / 3,
  );
  heartbeat.unref();
  let ran = false;
  let failed: { error: unknown } | null = null;
  try {
    await run();
    ran = true;
  } catch (error) {
    failed = { error };
  }
  clearInterval(heartbeat);
  held.delete(name);
  try {
    await leases.release(name, holder, ran);
  } catch (error) {
    // The store is down: the lease is let go of once it is back, not left to run out.
    leaveForLater(`job:${name}`, () => leases.release(name, holder, ran));
    failed ??= { error };
  }
  if (failed) throw failed.error;
  return true;
}

/**
 * Lets go of the leases (of jobs and of ledger syncs) whose release failed while the store was
 * out of reach; each look of the ledger jobs calls it first, so work an outage cut short goes on
 * as soon as the store is back. Returns how many; throws while the store is still down.
 */
export const releaseLeftLeases = doLeftOvers;

/** Releases every job lease this process still holds (its process is stopping); returns how many. */
export async function releaseHeldJobLeases(db: Db): Promise<number> {
  const held = processState().get(HELD);
  const leases = jobLeases(db);
  const all = [...held];
  held.clear();
  await Promise.all(all.map(([name, holder]) => leases.release(name, holder, false)));
  return all.length + (await releaseLeftLeases());
}
