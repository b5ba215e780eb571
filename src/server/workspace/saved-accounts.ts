/**
 * The accounts a workspace keeps (docs/design.md 17): each a site account with its access token sealed
 * in the vault, bound to the workspace and the account, and the account session renewed from it
 * through the sign-in's own verification (`GET /api/user/self`), so the person never types a token
 * again unless the site refuses it. A refused token puts the account in `reauth`; a site that left
 * the registry, or moved to another address, is `site_removed` or `reauth`: the token is only ever
 * sent to the address it was given for. Nothing of an account's ledger goes with its token.
 */
import { login, type LoginDeps } from "../auth/login";
import { loginRateLimiter } from "../auth/rate-limit";
import { MSG } from "../core/messages";
import { Refusal } from "../core/errors";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import type { Db } from "../db/client";
import { credentialOf, possession } from "../session/possession";
import { hashToken, sessionStore, type LiveSession } from "../session/store";
import { vaultOpen, vaultSeal } from "../session/vault";
import { workspaceSites } from "../sites/workspace-sites";
import {
  MAX_WORKSPACE_ACCOUNTS,
  SAVED_MSG,
  accountSelect,
  checkAlias,
  checkTags,
  endingOf,
  fromRow,
  savedName,
  siteIndex,
  vaultContext,
  verifiedFields,
  type Row,
  type SavedAccount,
  type SiteIndex,
} from "./saved-rows";

export {
  MAX_WORKSPACE_ACCOUNTS,
  SAVED_MSG,
  heldOf,
  savedName,
  siteIndex,
  vaultContext,
  type SavedAccount,
  type SiteIndex,
} from "./saved-rows";

/** A session this close to its end is renewed before it is used (the runner renews earlier). */
const RENEW_BEFORE_MS = 60 * 60_000;
/** How long a renewal holds its account against renewals on other instances. */
const RENEW_LEASE_MS = 2 * 60_000;
/** Renewals under way in this process, per saved account: two requests share one call to the site. */
const RENEWING: StatePart<Map<number, Promise<Renewal>>> = { name: "renewals", create: () => new Map() };

/** A renewal's outcome: the new session, the account now unusable (its state says why), or the site not asked. */
type Renewal = { session: LiveSession } | { session: null; usable: boolean };

/** Sorting of a workspace's list: pinned first, then the person's order, then oldest first. */
const ORDER_BY = [{ pinned: "desc" as const }, { position: "asc" as const }, { id: "asc" as const }];

/**
 * What verifying a token a person gave is limited by, as a sign-in is (docs/design.md 8): the client's
 * address and the account, under LOGIN_RATE_LIMIT a minute.
 */
export type VerifyLimits = { clientAddress: string | null; loginRateLimit: number };

export function savedAccounts(
  db: Db,
  loginDeps: Omit<LoginDeps, "db" | "lane">,
  limits: VerifyLimits = { clientAddress: null, loginRateLimit: 0 },
) {
  const deps: LoginDeps = { ...loginDeps, db };

  /** Verifies a token with its site (the sign-in itself) and returns the new account session. */
  async function verify(
    workspaceId: number,
    siteId: number,
    userId: number | string,
    accessToken: string,
    lane?: string,
  ) {
    // The workspace's own sites are signed in to as well as the operator's.
    const ownSite = (id: number) => workspaceSites(db).usable(workspaceId, id);
    const outcome = await login(
      { siteId, userId, accessToken },
      lane === undefined ? { ...deps, ownSite } : { ...deps, ownSite, lane },
    );
    if (!outcome.result.success) return { ok: false as const, message: outcome.result.message, kind: outcome.kind };
    const { sessionToken, userInfo, site } = outcome.result.data;
    const credential = credentialOf({ siteId, siteUserId: Number(userId) }, accessToken);
    return { ok: true as const, sessionId: hashToken(sessionToken), userInfo, site, credential };
  }

  /** The saved accounts with their credentials' endings: those newly found ended are stored as `reauth`. */
  async function fromRows(rows: Row[], sites: SiteIndex): Promise<SavedAccount[]> {
    const held = rows.flatMap((r) =>
      r.credential === null ? [] : [{ siteId: r.siteId, siteUserId: Number(r.siteUserId), fingerprint: r.credential }],
    );
    const endings = await possession(db).endings(held);
    const now = rows.filter((r) => r.state === "ok" && endingOf(r, endings) !== undefined);
    if (now.length > 0) {
      await db.workspaceAccount.updateMany({
        where: { id: { in: now.map((r) => r.id) }, state: "ok" },
        data: { state: "reauth", stateMessage: SAVED_MSG.ended, sessionId: null },
      });
      for (const r of now) logEvent("workspace.reauth", { account: r.id, site: r.siteId, reason: "credential_ended" });
    }
    return rows.map((r) => fromRow(r, sites, endings));
  }

  async function setState(id: number, state: "ok" | "reauth", message: string | null, now = new Date()) {
    await db.workspaceAccount.updateMany({
      where: { id },
      data: { state, stateMessage: message, stateAt: now, ...(state === "reauth" ? { sessionId: null } : {}) },
    });
  }

  /** The account's session, renewed from its saved token when it is missing or ending. */
  async function renew(account: SavedAccount, now: Date): Promise<Renewal> {
    const unusable = { session: null, usable: false } as const;
    const url = (await siteIndex(db)).get(account.siteId)?.url;
    if (url === undefined) return unusable;
    if (url !== account.siteUrl) {
      await setState(account.id, "reauth", SAVED_MSG.moved, now);
      return unusable;
    }
    // One renewal of an account at a time across instances; the holder's new session serves everyone.
    const claimed = await db.workspaceAccount.updateMany({
      where: { id: account.id, OR: [{ renewUntil: null }, { renewUntil: { lt: now } }] },
      data: { renewUntil: new Date(now.getTime() + RENEW_LEASE_MS) },
    });
    if (claimed.count === 0) return { session: null, usable: true };
    try {
      return await renewHeld(account, now);
    } finally {
      await db.workspaceAccount.updateMany({ where: { id: account.id }, data: { renewUntil: null } });
    }
  }

  async function renewHeld(account: SavedAccount, now: Date): Promise<Renewal> {
    const unusable = { session: null, usable: false } as const;
    const row = await db.workspaceAccount.findUnique({ where: { id: account.id }, select: { accessToken: true } });
    if (!row) return unusable;
    const token = vaultOpen(row.accessToken, vaultContext(account.workspaceId, account.siteId, account.siteUserId));
    if (token === null) {
      await setState(account.id, "reauth", SAVED_MSG.unsealable, now);
      logEvent("workspace.token_unsealable", { account: account.id });
      return unusable;
    }
    const verified = await verify(account.workspaceId, account.siteId, account.userId, token);
    if (!verified.ok) {
      // A site that cannot be asked now is tried again later; one that says no needs the person.
      if (verified.kind !== "refused") return { session: null, usable: true };
      await setState(account.id, "reauth", `${SAVED_MSG.reauth}（${verified.message}）`, now);
      logEvent("workspace.reauth", { account: account.id, site: account.siteId });
      return unusable;
    }
    const store = sessionStore(db);
    const old = account.sessionId;
    await db.workspaceAccount.updateMany({ where: { id: account.id }, data: verifiedFields(verified, now) });
    if (old !== null && old !== verified.sessionId) await store.remove(old);
    const session = await store.findLiveById(verified.sessionId, now);
    return session ? { session } : { session: null, usable: true };
  }

  return {
    async list(workspaceId: number, known?: SiteIndex): Promise<SavedAccount[]> {
      const [rows, sites] = await Promise.all([
        db.workspaceAccount.findMany({ where: { workspaceId }, select: accountSelect, orderBy: ORDER_BY }),
        known ?? siteIndex(db),
      ]);
      return fromRows(rows, sites);
    },

    async get(workspaceId: number, id: number, known?: SiteIndex): Promise<SavedAccount> {
      const row = await db.workspaceAccount.findFirst({ where: { id, workspaceId }, select: accountSelect });
      if (!row) throw new Refusal(SAVED_MSG.notFound, "NOT_FOUND");
      const [account] = await fromRows([row], known ?? (await siteIndex(db)));
      return account as SavedAccount;
    },

    /**
     * Saves an account after its site accepted the token (the site's own refusal otherwise, as
     * sign-in answers it). Saving an account the workspace holds already replaces its token and
     * keeps the rest (re-authorisation).
     */
    async add(
      workspaceId: number,
      input: { siteId: number; userId: number | string; accessToken: string; alias?: string | null; tags?: string[] },
      now = new Date(),
      /**
       * An account the workspace holds already: `replace` takes the new token (re-authorisation,
       * a backup imported again); `refuse` changes nothing and says where it is.
       */
      ifSaved: "replace" | "refuse" = "replace",
    ): Promise<{ ok: true; account: SavedAccount } | { ok: false; message: string }> {
      const alias = checkAlias(input.alias);
      const tags = checkTags(input.tags ?? []);
      const siteUserId = Number(input.userId);
      const existing = Number.isSafeInteger(siteUserId)
        ? await db.workspaceAccount.findUnique({
            where: { workspaceId_siteId_siteUserId: { workspaceId, siteId: input.siteId, siteUserId } },
            select: { id: true, sessionId: true },
          })
        : null;
      if (existing && ifSaved === "refuse") {
        const held = await this.get(workspaceId, existing.id);
        return { ok: false, message: SAVED_MSG.alreadySaved(savedName(held)) };
      }
      if (!existing && (await db.workspaceAccount.count({ where: { workspaceId } })) >= MAX_WORKSPACE_ACCOUNTS) {
        throw new Refusal(SAVED_MSG.tooMany, "BAD_REQUEST");
      }
      // A token a person gives is a sign-in: its limits, and a turn among the site's live calls.
      const limit = await loginRateLimiter(db, limits.loginRateLimit).hit(limits.clientAddress, input);
      if (!limit.allowed) throw new Refusal(MSG.rateLimited, "TOO_MANY_REQUESTS", limit.retryAfterSeconds);
      const verified = await verify(
        workspaceId,
        input.siteId,
        input.userId,
        input.accessToken,
        `workspace:${workspaceId}`,
      );
      if (!verified.ok) return { ok: false, message: verified.message };
      const sealed = vaultSeal(input.accessToken, vaultContext(workspaceId, input.siteId, siteUserId));
      const fields = {
        siteUrl: verified.site.url,
        userId: JSON.stringify(input.userId),
        accessToken: sealed,
        ...verifiedFields(verified, now),
      };
      let id: number;
      if (existing) {
        await db.workspaceAccount.update({
          where: { id: existing.id },
          data: { ...fields, ...(input.alias !== undefined ? { alias } : {}) },
          select: { id: true },
        });
        if (existing.sessionId && existing.sessionId !== verified.sessionId) {
          await sessionStore(db).remove(existing.sessionId);
        }
        id = existing.id;
      } else {
        const last = await db.workspaceAccount.findFirst({
          where: { workspaceId },
          select: { position: true },
          orderBy: { position: "desc" },
        });
        const created = await db.workspaceAccount.create({
          data: {
            workspaceId,
            siteId: input.siteId,
            siteUserId,
            alias,
            tags: JSON.stringify(tags),
            position: (last?.position ?? 0) + 1,
            createdAt: now,
            ...fields,
          },
          select: { id: true },
        });
        id = created.id;
      }
      logEvent("workspace.account_saved", { workspace: workspaceId, account: id, site: input.siteId });
      return { ok: true, account: await this.get(workspaceId, id) };
    },

    /** Changes what the person set on an account (not its token: `add` re-authorises). */
    async update(
      workspaceId: number,
      id: number,
      change: {
        alias?: string | null;
        tags?: string[];
        pinned?: boolean;
        excluded?: boolean;
        order?: number;
        autoCheckin?: boolean;
      },
    ): Promise<SavedAccount> {
      await this.get(workspaceId, id);
      await db.workspaceAccount.updateMany({
        where: { id, workspaceId },
        data: {
          ...(change.alias !== undefined ? { alias: checkAlias(change.alias) } : {}),
          ...(change.tags !== undefined ? { tags: JSON.stringify(checkTags(change.tags)) } : {}),
          ...(change.pinned !== undefined ? { pinned: change.pinned } : {}),
          ...(change.excluded !== undefined ? { excluded: change.excluded } : {}),
          ...(change.order !== undefined ? { position: change.order } : {}),
          // Turned on: the runner looks at it first thing (and finds its moment of the day).
          ...(change.autoCheckin !== undefined
            ? { autoCheckin: change.autoCheckin, ...(change.autoCheckin ? { checkinNext: new Date(0) } : {}) }
            : {}),
        },
      });
      return this.get(workspaceId, id);
    },

    /** The saved tokens of a workspace's accounts, opened (for the sync file); an unopenable one is left out. */
    async tokens(workspaceId: number): Promise<Map<number, string>> {
      const rows = await db.workspaceAccount.findMany({
        where: { workspaceId },
        select: { id: true, siteId: true, siteUserId: true, accessToken: true },
      });
      const out = new Map<number, string>();
      for (const row of rows) {
        const token = vaultOpen(row.accessToken, vaultContext(workspaceId, row.siteId, Number(row.siteUserId)));
        if (token !== null) out.set(row.id, token);
      }
      return out;
    },

    /** Removes an account: its sealed token and its session go; its ledger is the caller's to keep or not. */
    async remove(workspaceId: number, id: number): Promise<SavedAccount> {
      const account = await this.get(workspaceId, id);
      await db.workspaceAccount.deleteMany({ where: { id, workspaceId } });
      if (account.sessionId) await sessionStore(db).remove(account.sessionId);
      logEvent("workspace.account_removed", { workspace: workspaceId, account: id });
      return account;
    },

    /**
     * The live session of a saved account, renewed from its token when it is missing or ends within
     * RENEW_BEFORE_MS; null when the account cannot be used now (its state then says why, or its
     * site could not be asked and the old session has ended too).
     */
    async sessionOf(account: SavedAccount, now = new Date()): Promise<LiveSession | null> {
      if (account.state !== "ok") return null;
      const store = sessionStore(db);
      const current = account.sessionId === null ? null : await store.findLiveById(account.sessionId, now);
      if (current && current.expiresAt.getTime() - now.getTime() > RENEW_BEFORE_MS) return current;
      const renewing = processState().get(RENEWING);
      let pending = renewing.get(account.id);
      if (!pending) {
        pending = renew(account, now).finally(() => renewing.delete(account.id));
        renewing.set(account.id, pending);
      }
      const renewal = await pending;
      // A site down now: the session that is ending still serves until it ends.
      return renewal.session ?? (renewal.usable ? current : null);
    },

    /**
     * Saved accounts whose session is missing or ends within RUNNER_RENEW_BEFORE_MS (every
     * workspace's), the most urgent first, at most `limit`: what the background renewal takes.
     */
    async dueForRenewal(limit: number, now = new Date()): Promise<SavedAccount[]> {
      const rows = await db.workspaceAccount.findMany({
        where: { state: "ok", renewAt: { lte: now }, OR: [{ renewUntil: null }, { renewUntil: { lt: now } }] },
        select: accountSelect,
        orderBy: { renewAt: "asc" },
        take: limit,
      });
      return fromRows(rows, await siteIndex(db));
    },

    /** The background renewal could not renew it now: it is looked at again at `at`. */
    async renewLater(id: number, at: Date): Promise<void> {
      await db.workspaceAccount.updateMany({ where: { id, state: "ok" }, data: { renewAt: at } });
    },

    /** Renews one account's session now (the background renewal); false when it could not be. */
    async renewNow(account: SavedAccount, now = new Date()): Promise<boolean> {
      return (await renew(account, now)).session !== null;
    },

    /** Whether any other workspace keeps this site account (its ledger is then theirs too). */
    async savedElsewhere(workspaceId: number, siteId: number, siteUserId: number): Promise<boolean> {
      const n = await db.workspaceAccount.count({
        where: { siteId, siteUserId, workspaceId: { not: workspaceId } },
      });
      return n > 0;
    },
  };
}

export type SavedAccounts = ReturnType<typeof savedAccounts>;
