/**
 * The prices kept (docs/design.md 22): each site's published list at group ratio 1 with every change of
 * it and its time, each site's group ratios, and each account's group, ratio, usable models and
 * the prices fitted from its own log. Written when a site is read (prices/read.ts).
 */
import type { Db } from "../db/client";
import { pgClaim } from "../db/claim";
import { driverOf } from "../db/driver";
import type { ModelPrice } from "../gateway/prices";

/** A site's list is read again after this long (hourly: a price change is seen within the hour). */
export const SITE_PRICES_TTL_MS = 60 * 60_000;
/**
 * An account's side (its usable models, the prices fitted from its log) is read again after this
 * long; its group follows every sync of its ledger (`noteGroup`), so its ratio is never a day old.
 */
export const ACCOUNT_PRICES_TTL_MS = 24 * 60 * 60_000;

/** Claims the sites' lists due (db/claim.ts). */
const PG_CLAIM_LISTS = pgClaim({ table: "site_price_reads", key: ["site_id"], due: "next_at" });

export type StoredPrice = Omit<ModelPrice, "groups"> & { groups: string[] | null };

export type AccountSide = {
  group: string;
  groupRatio: number | null;
  models: string[];
  derived: Array<Omit<ModelPrice, "groups">>;
  readAt: Date;
  error: string | null;
};

const same = (a: number | null, b: number | null) =>
  a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)));

/** A model's figures at group ratio 1 (USD per 1M tokens, or per call). */
export type PriceFigures = { inputPerM: number | null; outputPerM: number | null; perCall: number | null };

/** A model's price on a site between two times: null on a side where it was not listed. */
export type PriceMove = {
  siteId: number;
  model: string;
  at: Date;
  before: PriceFigures | null;
  after: PriceFigures | null;
};

const changeFigures = { at: true, inputPerM: true, outputPerM: true, perCall: true } as const;

/** A change row's figures; null for none, or for the row that says the model left the list. */
export const figuresOf = (r: PriceFigures | undefined): PriceFigures | null =>
  !r || (r.inputPerM === null && r.outputPerM === null && r.perCall === null)
    ? null
    : { inputPerM: r.inputPerM, outputPerM: r.outputPerM, perCall: r.perCall };

const priceSelect = { model: true, inputPerM: true, outputPerM: true, perCall: true, groups: true } as const;

export function priceStore(db: Db) {
  return {
    /**
     * Keeps a site's list as read now: models added or changed are written with a change row,
     * models gone get a change row of nulls; the same list again writes nothing. Returns the changes.
     */
    async recordSite(
      siteId: number,
      read: { prices: ModelPrice[]; published: boolean; groupRatios: Record<string, number> },
      now = new Date(),
    ): Promise<number> {
      const current = await db.sitePrice.findMany({ where: { siteId }, select: priceSelect });
      const before = new Map(current.map((r) => [r.model, r]));
      const after = new Map(read.prices.map((p) => [p.model, p]));
      const changed = read.prices.filter((p) => {
        const was = before.get(p.model);
        return (
          !was ||
          !same(was.inputPerM, p.inputPerMillionUsd) ||
          !same(was.outputPerM, p.outputPerMillionUsd) ||
          !same(was.perCall, p.perCallUsd)
        );
      });
      const regrouped = read.prices.filter((p) => {
        const was = before.get(p.model);
        return was && (was.groups ?? null) !== (p.groups ? JSON.stringify(p.groups) : null);
      });
      const gone = current.filter((r) => !after.has(r.model)).map((r) => r.model);
      await db.$transaction(async (tx) => {
        for (const p of [...changed, ...regrouped]) {
          const data = {
            inputPerM: p.inputPerMillionUsd,
            outputPerM: p.outputPerMillionUsd,
            perCall: p.perCallUsd,
            groups: p.groups ? JSON.stringify(p.groups) : null,
          };
          await tx.sitePrice.upsert({
            where: { siteId_model: { siteId, model: p.model } },
            create: { siteId, model: p.model, ...data },
            update: data,
            select: { model: true },
          });
        }
        for (const p of changed) {
          await tx.sitePriceChange.create({
            data: {
              siteId,
              model: p.model,
              at: now,
              inputPerM: p.inputPerMillionUsd,
              outputPerM: p.outputPerMillionUsd,
              perCall: p.perCallUsd,
            },
            select: { id: true },
          });
        }
        if (gone.length > 0) {
          await tx.sitePrice.deleteMany({ where: { siteId, model: { in: gone } } });
          for (const model of gone) {
            await tx.sitePriceChange.create({
              data: { siteId, model, at: now, inputPerM: null, outputPerM: null, perCall: null },
              select: { id: true },
            });
          }
        }
        const reading = {
          readAt: now,
          published: read.published,
          groupRatios: JSON.stringify(read.groupRatios),
          nextAt: new Date(now.getTime() + SITE_PRICES_TTL_MS),
        };
        await tx.sitePriceRead.upsert({
          where: { siteId },
          create: { siteId, ...reading },
          update: reading,
          select: { siteId: true },
        });
      });
      return changed.length + gone.length;
    },

    async recordAccount(owner: { siteId: number; siteUserId: number }, side: AccountSide): Promise<void> {
      const data = {
        group: side.group,
        groupRatio: side.groupRatio,
        models: JSON.stringify(side.models),
        derived: JSON.stringify(side.derived),
        readAt: side.readAt,
        error: side.error,
      };
      await db.accountPrice.upsert({
        where: { siteId_siteUserId: { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) } },
        create: { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId), ...data },
        update: data,
        select: { siteId: true },
      });
    },

    /**
     * The group a sync of the account's ledger just read from its user object. Where the side
     * names another, it takes this one with the group's ratio from the site's last list (null
     * where the site does not say it) and no usable models until it is read again (the site's
     * groups then say which models it may use). Returns whether the group changed. Read first:
     * every sync asks, and the group rarely changes.
     */
    async noteGroup(owner: { siteId: number; siteUserId: number }, group: string): Promise<boolean> {
      const key = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
      const side = await db.accountPrice.findUnique({ where: { siteId_siteUserId: key }, select: { group: true } });
      if (!side || side.group === group) return false;
      const ratio = (await this.siteReads([owner.siteId])).get(owner.siteId)?.groupRatios[group] ?? null;
      const { count } = await db.accountPrice.updateMany({
        where: { ...key, group: side.group },
        data: { group, groupRatio: ratio, models: "[]" },
      });
      return count > 0;
    },

    /** A read that failed: said on the account, its last good figures kept. */
    async noteAccountError(
      owner: { siteId: number; siteUserId: number },
      error: string,
      now = new Date(),
    ): Promise<void> {
      const where = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
      const { count } = await db.accountPrice.updateMany({ where, data: { error } });
      if (count === 0) {
        await db.accountPrice.create({
          data: { ...where, group: "", groupRatio: null, models: "[]", derived: "[]", readAt: now, error },
          select: { siteId: true },
        });
      }
    },

    /**
     * Claims the sites whose list the hourly pass reads next (an indexed due time, the earliest
     * first, at most `limit`) and holds them until `holdUntil`: every instance's pass claims its
     * own (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite has one process), and a pass that dies
     * lets its sites fall due again at the hold's end. A site enters with its first list, read
     * with its first account's side.
     */
    async claimSiteLists(now: Date, limit: number, holdUntil: Date): Promise<number[]> {
      if (driverOf(db).kind === "postgres") {
        const rows = await db.$queryRawUnsafe<Array<{ site_id: number }>>(
          PG_CLAIM_LISTS,
          holdUntil.toISOString(),
          now.toISOString(),
          limit,
        );
        return rows.map((r) => r.site_id);
      }
      return db.$transaction(async (tx) => {
        const rows = await tx.sitePriceRead.findMany({
          where: { nextAt: { lte: now } },
          orderBy: { nextAt: "asc" },
          take: limit,
          select: { siteId: true },
        });
        const ids = rows.map((r) => r.siteId);
        if (ids.length > 0)
          await tx.sitePriceRead.updateMany({ where: { siteId: { in: ids } }, data: { nextAt: holdUntil } });
        return ids;
      });
    },

    /** These sites' lists are read next at `at` (a try that could not read them keeps the last list). */
    async siteListsLater(siteIds: number[], at: Date): Promise<void> {
      if (siteIds.length > 0)
        await db.sitePriceRead.updateMany({ where: { siteId: { in: siteIds } }, data: { nextAt: at } });
    },

    /** The sites' current lists, by site. */
    async sitePrices(siteIds: number[]): Promise<Map<number, StoredPrice[]>> {
      const rows = await db.sitePrice.findMany({
        where: { siteId: { in: siteIds } },
        select: { siteId: true, ...priceSelect },
      });
      const out = new Map<number, StoredPrice[]>();
      for (const r of rows) {
        const list = out.get(r.siteId) ?? [];
        list.push({
          model: r.model,
          inputPerMillionUsd: r.inputPerM,
          outputPerMillionUsd: r.outputPerM,
          perCallUsd: r.perCall,
          groups: r.groups ? (JSON.parse(r.groups) as string[]) : null,
        });
        out.set(r.siteId, list);
      }
      return out;
    },

    async siteReads(
      siteIds: number[],
    ): Promise<Map<number, { readAt: Date; published: boolean; groupRatios: Record<string, number> }>> {
      const rows = await db.sitePriceRead.findMany({
        where: { siteId: { in: siteIds } },
        select: { siteId: true, readAt: true, published: true, groupRatios: true },
      });
      return new Map(
        rows.map((r) => [
          r.siteId,
          {
            readAt: r.readAt,
            published: r.published,
            groupRatios: JSON.parse(r.groupRatios) as Record<string, number>,
          },
        ]),
      );
    },

    async accounts(owners: Array<{ siteId: number; siteUserId: number }>): Promise<Map<string, AccountSide>> {
      if (owners.length === 0) return new Map();
      const rows = await db.accountPrice.findMany({
        where: { OR: owners.map((o) => ({ siteId: o.siteId, siteUserId: BigInt(o.siteUserId) })) },
        select: {
          siteId: true,
          siteUserId: true,
          group: true,
          groupRatio: true,
          models: true,
          derived: true,
          readAt: true,
          error: true,
        },
      });
      return new Map(
        rows.map((r) => [
          `${r.siteId}:${r.siteUserId}`,
          {
            group: r.group,
            groupRatio: r.groupRatio,
            models: JSON.parse(r.models) as string[],
            derived: JSON.parse(r.derived) as AccountSide["derived"],
            readAt: r.readAt,
            error: r.error,
          },
        ]),
      );
    },

    /**
     * The models whose price changed on the sites after `since`: the price as it stood then (or
     * as first listed, for a model listed since; null: new) and as it stands now (null: gone),
     * with the latest change's time.
     */
    async changedSince(siteIds: number[], since: Date): Promise<PriceMove[]> {
      if (siteIds.length === 0) return [];
      const recent = await db.sitePriceChange.findMany({
        where: { siteId: { in: siteIds }, at: { gt: since } },
        orderBy: { at: "asc" },
        select: { siteId: true, model: true, ...changeFigures },
      });
      if (recent.length === 0) return [];
      // Per model: its first and last change in the window.
      const first = new Map<string, (typeof recent)[number]>();
      const last = new Map<string, (typeof recent)[number]>();
      for (const r of recent) {
        const key = `${r.siteId}\n${r.model}`;
        if (!first.has(key)) first.set(key, r);
        last.set(key, r);
      }
      const earlier = await db.sitePriceChange.findMany({
        where: {
          at: { lte: since },
          OR: [...last.values()].map((r) => ({ siteId: r.siteId, model: r.model })),
        },
        orderBy: { at: "asc" },
        select: { siteId: true, model: true, ...changeFigures },
      });
      const then = new Map(earlier.map((r) => [`${r.siteId}\n${r.model}`, r]));
      return [...last.entries()].map(([key, r]) => {
        // Where the model was first listed inside the window, that listing is its price before.
        const start = then.get(key) ?? (first.get(key) !== r ? first.get(key) : undefined);
        return { siteId: r.siteId, model: r.model, at: r.at, before: figuresOf(start), after: figuresOf(r) };
      });
    },

    /** The price changes of these models on the sites, oldest first. */
    async histories(siteIds: number[], models: string[]) {
      if (siteIds.length === 0 || models.length === 0) return [];
      return db.sitePriceChange.findMany({
        where: { siteId: { in: siteIds }, model: { in: models } },
        orderBy: { at: "asc" },
        select: { siteId: true, model: true, ...changeFigures },
      });
    },
  };
}
