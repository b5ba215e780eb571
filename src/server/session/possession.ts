/**
 * Power follows possession (docs/design.md 24). An account (a site and Number(user id)) may be reached
 * by several holders: browser sessions, saved accounts of workspaces, each with the access token it
 * was given. A holder has power over the account (its live data, actions, sessions, kept history)
 * only while its token is the account's current credential: the last one the site accepted, not
 * refused since. The sites give a user one access token at a time, so when the site accepts a new
 * one every other one has ended (the owner reset it), and a refusal, once confirmed with `GET
 * /api/user/self`, ends the one refused. An ended credential's sessions end with it; a saved
 * account holding one needs re-authorisation, and keeps the account's history up to the hour its
 * credential ended (what it saw while it held the account), nothing after.
 *
 * Tokens are known here by a fingerprint only: the SHA-256 of the site account and the token.
 */
import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";

export type Owner = { siteId: number; siteUserId: number };

/** The fingerprint a token is known by for one site account (never the token). */
export function credentialOf(owner: Owner, accessToken: string): string {
  return createHash("sha256").update(`gd-credential:${owner.siteId}:${owner.siteUserId}:${accessToken}`).digest("hex");
}

const keyOf = (owner: Owner, fingerprint: string) => `${owner.siteId}:${owner.siteUserId}:${fingerprint}`;

/** The first second of the hour in which a holder's possession ended: its history ends there (Unix seconds). */
export const heldUntilSecond = (endedAt: Date): number => {
  const s = Math.floor(endedAt.getTime() / 1000);
  return s - (s % 3600);
};

export function possession(db: Db) {
  return {
    /**
     * The site accepted `fingerprint` for the account: it is the account's credential from now on;
     * every other one ends now, and the sessions signed in with another (or with an unknown one,
     * from before credentials were kept) end with it.
     */
    async accepted(owner: Owner, fingerprint: string, now = new Date()): Promise<void> {
      // On the sign-in's path: prepared statements in one transaction, not three Prisma queries.
      await hotPath(db).acceptCredential(owner.siteId, owner.siteUserId, fingerprint, now);
    },

    /**
     * The site refused `fingerprint` (confirmed): if the account held it, it ends now, with every
     * session signed in with it (and `sessionId`, one from before credentials were kept). A token
     * nobody held leaves nothing behind (a guess at a sign-in is not kept).
     */
    async refused(owner: Owner, fingerprint: string, sessionId?: string, now = new Date()): Promise<void> {
      const where = { siteId: owner.siteId, siteUserId: owner.siteUserId };
      await db.accountCredential.updateMany({
        where: { ...where, fingerprint, endedAt: null },
        data: { endedAt: now },
      });
      await db.session.deleteMany({
        where: { ...where, OR: [{ credential: fingerprint }, ...(sessionId ? [{ id: sessionId }] : [])] },
      });
    },

    /** When each of these credentials ended; absent: it has not (or it is not known here). */
    async endings(held: Array<Owner & { fingerprint: string }>): Promise<Map<string, Date>> {
      if (held.length === 0) return new Map();
      const rows = await db.accountCredential.findMany({
        where: {
          endedAt: { not: null },
          OR: held.map((h) => ({ siteId: h.siteId, siteUserId: h.siteUserId, fingerprint: h.fingerprint })),
        },
        select: { siteId: true, siteUserId: true, fingerprint: true, endedAt: true },
      });
      return new Map(
        rows.map((r) => [keyOf({ siteId: r.siteId, siteUserId: Number(r.siteUserId) }, r.fingerprint), r.endedAt!]),
      );
    },
  };
}

/** The key `endings` answers a credential under. */
export const endingKey = keyOf;
