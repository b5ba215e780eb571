import { createHash, randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import { driverOf } from "../db/driver";
import { hotPath, type SiteRef } from "../db/hot-path";
import { seal, sealedWithKnownPassword, unseal } from "./seal";

export const SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function isWellFormedToken(token: string): boolean {
  return UUID_V4.test(token);
}

/** Seals a site access token for storage (newest password; the seal never expires by itself). */
export function sealAccessToken(accessToken: string): Promise<string> {
  return seal({ accessToken }, 0);
}

export type NewSession = {
  /** As received at login (the spec's column). */
  userId: number | string;
  /** Number(userId): the account's id on its site, which identity comparisons use. */
  siteUserId: number;
  /** From sealAccessToken: callers may seal while they wait for the site. */
  sealedAccessToken: string;
  siteId: number;
  siteUrl: string;
  userInfo: Record<string, unknown>;
  /** The access token's fingerprint (possession.ts): the session lives while it is the account's credential. */
  credential: string;
};

export type StoredSession = {
  id: string;
  userId: number | string;
  siteId: number;
  /** The site's address at sign-in: the access token is sent there and nowhere else. */
  siteUrl: string;
  siteUserId: number;
  userInfo: string;
  createdAt: Date;
  expiresAt: Date;
  /** Its access token's fingerprint (null: signed in before they were kept). */
  credential: string | null;
};

/**
 * A session found by its token, with its site as the registry has it now (null once removed).
 * `key` is how a listing names its account when it is not the browser's key of the session (a
 * workspace names its saved accounts by their id).
 */
export type LiveSession = StoredSession & {
  site: SiteRef | null;
  key?: string;
  /**
   * Set when the reader no longer holds the account (a saved account whose credential ended): its
   * history is read up to this second and no further (docs/design.md 24). Live sessions never have it.
   */
  heldUntil?: number;
  /** A saved account's alias in its workspace, which pages call it by. */
  alias?: string | null;
};

const sessionSelect = {
  id: true,
  userId: true,
  siteId: true,
  siteUrl: true,
  siteUserId: true,
  userInfo: true,
  createdAt: true,
  expiresAt: true,
  credential: true,
} as const;

type Row = { userId: string; siteUserId: bigint } & Omit<StoredSession, "userId" | "siteUserId">;

function fromRow(row: Row): StoredSession {
  return { ...row, userId: JSON.parse(row.userId) as number | string, siteUserId: Number(row.siteUserId) };
}

/** Up to $2 sessions expired at $1, in one statement; rows another purge holds are skipped. */
const PG_PURGE = `DELETE FROM "sessions" WHERE "id" IN (
  SELECT "id" FROM "sessions" WHERE "expires_at" <= $1::timestamp LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/** The account a session belongs to: its site and Number(user_id), however the id was spelled. */
const ownedBy = (owner: { siteId: number; siteUserId: number }) => ({
  siteId: owner.siteId,
  siteUserId: owner.siteUserId,
});

/**
 * An account with a live session is owed ledger syncs (due.ts): its due row is made, due at
 * once, or a parked one (no live session at its last look) is due again; a set due time is kept.
 */
async function owedSyncs(
  db: Pick<Db, "ledgerDue">,
  owner: { siteId: number; siteUserId: number },
  now: Date,
): Promise<void> {
  const key = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
  const { count } = await db.ledgerDue.updateMany({ where: { ...key, dueAt: null }, data: { dueAt: now } });
  if (count > 0) return;
  await db.ledgerDue.upsert({
    where: { siteId_siteUserId: key },
    create: { ...key, dueAt: now },
    update: {},
    select: { siteId: true },
  });
}

export function sessionStore(db: Db) {
  return {
    /** Stores a new session and returns its token; only the token's hash is kept. */
    async create(input: NewSession, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
      const token = randomUUID();
      const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
      // The session and the sync it owes in one transaction: a store that cannot write keeps neither.
      const write = () =>
        db.$transaction(async (tx) => {
          await tx.session.create({
            data: {
              id: hashToken(token),
              userId: JSON.stringify(input.userId),
              siteUserId: input.siteUserId,
              accessToken: input.sealedAccessToken,
              siteId: input.siteId,
              siteUrl: input.siteUrl,
              userInfo: JSON.stringify(input.userInfo),
              createdAt: now,
              expiresAt,
              credential: input.credential,
            },
            select: { id: true },
          });
          await owedSyncs(tx, input, now);
        });
      try {
        await write();
      } catch (error) {
        // Two first sign-ins of one account at once: the other made its due row; once more finds it.
        if ((error as { code?: string }).code !== "P2002") throw error;
        await write();
      }
      return { token, expiresAt };
    },

    /** The live session a token names; an expired one is deleted on this read. */
    async findValid(token: string, now = new Date()): Promise<LiveSession | null> {
      if (!isWellFormedToken(token)) return null;
      return this.findLiveById(hashToken(token), now);
    },

    /** The live session of a stored id (a saved account keeps its session's id, not its token). */
    async findLiveById(id: string, now = new Date()): Promise<LiveSession | null> {
      const row = await hotPath(db).sessionById(id);
      if (!row) return null;
      // Expired, or its credential ended (the site took a new token, or refused this one): gone.
      if (row.expiresAt.getTime() <= now.getTime() || row.credentialEnded) {
        await db.session.deleteMany({ where: { id: row.id } });
        return null;
      }
      // Its access token was sealed by a password since removed: the session can no longer be used.
      if (!sealedWithKnownPassword(row.accessToken)) return null;
      // The site moved: the token was given for the old address, so the session ends (docs/design.md 10).
      if (row.site && row.site.url !== row.signedInUrl) {
        await db.session.deleteMany({ where: { id: row.id } });
        return null;
      }
      return {
        id: row.id,
        userId: JSON.parse(row.userId) as number | string,
        siteId: row.siteId,
        siteUrl: row.signedInUrl,
        siteUserId: row.siteUserId,
        userInfo: row.userInfo,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
        credential: row.credential,
        site: row.site,
      };
    },

    /** Whether the session (by its stored id) still exists and has not expired. */
    async isLive(id: string, now = new Date()): Promise<boolean> {
      const row = await hotPath(db).sessionById(id);
      return row !== null && row.expiresAt.getTime() > now.getTime();
    },

    /**
     * The site access token of a session, unsealed for one call to the site at `siteUrl`; null once
     * the session is gone, or when the site is no longer at the address the token was given for.
     */
    async accessTokenOf(id: string, siteUrl: string): Promise<string | null> {
      const row = await db.session.findUnique({ where: { id }, select: { accessToken: true, siteUrl: true } });
      if (!row || row.siteUrl !== siteUrl) return null;
      const opened = await unseal<{ accessToken: string }>(row.accessToken, 0);
      return typeof opened?.accessToken === "string" ? opened.accessToken : null;
    },

    /** When each of these sessions ends (absent: no such session). */
    async expiries(ids: string[]): Promise<Map<string, Date>> {
      if (ids.length === 0) return new Map();
      const rows = await db.session.findMany({ where: { id: { in: ids } }, select: { id: true, expiresAt: true } });
      return new Map(rows.map((r) => [r.id, r.expiresAt]));
    },

    async remove(id: string): Promise<void> {
      await db.session.deleteMany({ where: { id } });
    },

    /**
     * Live sessions of the owner's account signed in with the owner's own credential, newest
     * first: those of another credential ended with it (possession.ts), and are no one's to list.
     */
    async listForAccount(owner: StoredSession, now = new Date()): Promise<StoredSession[]> {
      const rows = await db.session.findMany({
        where: { ...ownedBy(owner), credential: owner.credential, expiresAt: { gt: now } },
        select: sessionSelect,
        orderBy: { createdAt: "desc" },
        take: 200,
      });
      return rows.map(fromRow);
    },

    /** Deletes one live session of the owner's account; false when there is none such. */
    async removeOwn(owner: StoredSession, id: string, now = new Date()): Promise<boolean> {
      const { count } = await db.session.deleteMany({
        where: { id, ...ownedBy(owner), credential: owner.credential, expiresAt: { gt: now } },
      });
      return count > 0;
    },

    /** Deletes the account's other sessions; returns how many ended. */
    async removeOthers(keep: StoredSession): Promise<number> {
      const { count } = await db.session.deleteMany({
        where: { ...ownedBy(keep), credential: keep.credential, id: { not: keep.id } },
      });
      return count;
    },

    /**
     * The account's live session that lasts longest, signed in at `siteUrl` (the site's address
     * now): the background syncs use its token.
     */
    async newestLive(owner: { siteId: number; siteUserId: number }, siteUrl: string, now = new Date()) {
      const row = await db.session.findFirst({
        where: { ...ownedBy(owner), siteUrl, expiresAt: { gt: now } },
        orderBy: { expiresAt: "desc" },
        select: sessionSelect,
      });
      return row ? fromRow(row) : null;
    },

    /** Live sessions of the whole deployment (the metrics). */
    countLive(now = new Date()): Promise<number> {
      return db.session.count({ where: { expiresAt: { gt: now } } });
    },

    /** Live sessions of one site. */
    liveCount(siteId: number, now = new Date()): Promise<number> {
      return db.session.count({ where: { siteId, expiresAt: { gt: now } } });
    },

    /** Live sessions per site id. */
    async liveCountsBySite(now = new Date()): Promise<Map<number, number>> {
      const rows = await db.session.groupBy({
        by: ["siteId"],
        where: { expiresAt: { gt: now } },
        _count: { _all: true },
      });
      return new Map(rows.map((r) => [r.siteId, r._count._all]));
    },

    /** Ends the sessions of a site signed in at another address than `url` (it moved); returns how many. */
    async endMovedAway(siteId: number, url: string): Promise<number> {
      const { count } = await db.session.deleteMany({ where: { siteId, siteUrl: { not: url } } });
      return count;
    },

    /**
     * Deletes up to `batch` expired rows; returns how many went. On PostgreSQL one statement,
     * skipping rows another instance's purge holds.
     */
    async purgeExpired(batch: number, now = new Date()): Promise<number> {
      if (driverOf(db).kind === "postgres") return db.$executeRawUnsafe(PG_PURGE, now.toISOString(), batch);
      const rows = await db.session.findMany({
        where: { expiresAt: { lte: now } },
        select: { id: true },
        take: batch,
      });
      if (rows.length === 0) return 0;
      const { count } = await db.session.deleteMany({
        where: { id: { in: rows.map((r) => r.id) }, expiresAt: { lte: now } },
      });
      return count;
    },
  };
}
