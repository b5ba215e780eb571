/**
 * What a workspace's sync with All API Hub keeps (docs/design.md 26): its settings and the
 * extension's file (sealed), the temporary copies the extension uploads before it moves one into
 * place (sealed bytes), the links between the file's accounts and the saved ones, and the
 * results of the last writes.
 */
import type { Db } from "../db/client";
import { reseal, sealedWithOlderKey, vaultOpen, vaultSeal } from "../session/vault";

/** What the extension's deletions do here: remove the saved account, or keep it (listed in the result). */
export type HubDeletes = "remove" | "keep";

export type HubLink = {
  hubId: string;
  accountId: number | null;
  ours: string | null;
  oursAt: Date;
  theirs: string | null;
  /** The file's name of an account not saved, and why (refused by its site, or another way of signing in). */
  name: string | null;
  refused: string | null;
  removedAt: Date | null;
  goneThereAt: Date | null;
};

/** One account of a write's result. */
export type HubRunItem = {
  result: "added" | "changed" | "removed" | "kept" | "refused" | "skipped";
  name: string;
  message: string | null;
};

export type HubRun = { id: number; at: Date; message: string | null; items: HubRunItem[] };

/** A temporary copy more than this old is gone at the next write (the extension cleans up after a day too). */
const STALE_FILE_MS = 24 * 3_600_000;
/** Temporary copies a workspace may hold at once. */
const MAX_HUB_FILES = 8;
const RUNS_KEPT = 30;
const HOLD_MS = 20_000;
/** A hold is renewed this often while its holder lives: a holder that died lets go within HOLD_MS. */
const HOLD_RENEW_MS = 5_000;
/** This process's holds being renewed, by workspace. */
const renewing = new Map<number, NodeJS.Timeout>();

const fileContext = (workspaceId: number) => `hub:${workspaceId}:file`;
const passContext = (workspaceId: number) => `hub:${workspaceId}:passphrase`;
const tempContext = (workspaceId: number, name: string) => `hub:${workspaceId}:tmp:${name}`;

const linkSelect = {
  hubId: true,
  accountId: true,
  ours: true,
  oursAt: true,
  theirs: true,
  name: true,
  refused: true,
  removedAt: true,
  goneThereAt: true,
} as const;

export function hubStore(db: Db) {
  const ensure = (workspaceId: number) =>
    db.hubSync.upsert({ where: { workspaceId }, create: { workspaceId }, update: {}, select: { workspaceId: true } });

  return {
    async settings(workspaceId: number) {
      const row = await db.hubSync.findUnique({
        where: { workspaceId },
        select: { deletes: true, passphrase: true, fileAt: true, readAt: true, encrypted: true },
      });
      const deletes: HubDeletes = row?.deletes === "keep" ? "keep" : "remove";
      return {
        deletes,
        passphrase: row?.passphrase ? vaultOpen(row.passphrase, passContext(workspaceId)) : null,
        hasPassphrase: Boolean(row?.passphrase),
        fileAt: row?.fileAt ?? null,
        readAt: row?.readAt ?? null,
        encrypted: row?.encrypted ?? false,
      };
    },

    async setSettings(workspaceId: number, change: { deletes?: HubDeletes; passphrase?: string | null }) {
      await ensure(workspaceId);
      await db.hubSync.update({
        where: { workspaceId },
        data: {
          ...(change.deletes ? { deletes: change.deletes } : {}),
          ...(change.passphrase !== undefined
            ? { passphrase: change.passphrase === null ? null : vaultSeal(change.passphrase, passContext(workspaceId)) }
            : {}),
        },
        select: { workspaceId: true },
      });
    },

    /** The extension's file as it last wrote it (plain text), and whether it came encrypted. */
    async file(workspaceId: number): Promise<{ text: string; encrypted: boolean; at: Date } | null> {
      const row = await db.hubSync.findUnique({
        where: { workspaceId },
        select: { file: true, encrypted: true, fileAt: true },
      });
      if (!row?.file || !row.fileAt) return null;
      const text = vaultOpen(row.file, fileContext(workspaceId));
      return text === null ? null : { text, encrypted: row.encrypted, at: row.fileAt };
    },

    async setFile(workspaceId: number, file: { text: string; encrypted: boolean } | null, now: Date) {
      await ensure(workspaceId);
      await db.hubSync.update({
        where: { workspaceId },
        data: file
          ? { file: vaultSeal(file.text, fileContext(workspaceId)), encrypted: file.encrypted, fileAt: now }
          : { file: null, fileAt: null, encrypted: false },
        select: { workspaceId: true },
      });
    },

    async noteRead(workspaceId: number, now: Date) {
      await db.hubSync.upsert({
        where: { workspaceId },
        create: { workspaceId, readAt: now },
        update: { readAt: now },
        select: { workspaceId: true },
      });
    },

    /**
     * Holds the workspace's sync for one write (another write, on any instance, waits); false when
     * another holds it still after `waitMs`.
     */
    async hold(workspaceId: number, waitMs: number): Promise<boolean> {
      await ensure(workspaceId);
      const until = Date.now() + waitMs;
      for (;;) {
        const now = new Date();
        const { count } = await db.hubSync.updateMany({
          where: { workspaceId, OR: [{ heldUntil: null }, { heldUntil: { lt: now } }] },
          data: { heldUntil: new Date(now.getTime() + HOLD_MS) },
        });
        if (count > 0) {
          const timer = setInterval(() => {
            void db.hubSync
              .updateMany({ where: { workspaceId }, data: { heldUntil: new Date(Date.now() + HOLD_MS) } })
              .catch(() => undefined);
          }, HOLD_RENEW_MS);
          timer.unref();
          renewing.set(workspaceId, timer);
          return true;
        }
        if (Date.now() >= until) return false;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },

    async release(workspaceId: number) {
      clearInterval(renewing.get(workspaceId));
      renewing.delete(workspaceId);
      await db.hubSync.updateMany({ where: { workspaceId }, data: { heldUntil: null } });
    },

    /** A temporary copy's bytes as uploaded; null when there is none (or it no longer opens). */
    async temp(workspaceId: number, name: string): Promise<Buffer | null> {
      const row = await db.hubFile.findUnique({
        where: { workspaceId_name: { workspaceId, name } },
        select: { body: true },
      });
      const opened = row ? vaultOpen(row.body, tempContext(workspaceId, name)) : null;
      return opened === null ? null : Buffer.from(opened, "base64");
    },

    async temps(workspaceId: number) {
      return db.hubFile.findMany({
        where: { workspaceId },
        select: { name: true, size: true, createdAt: true },
        orderBy: { name: "asc" },
      });
    },

    /** Keeps a temporary copy; false when the workspace holds MAX_HUB_FILES others already. */
    async putTemp(workspaceId: number, name: string, bytes: Buffer, now: Date): Promise<{ created: boolean } | null> {
      await db.hubFile.deleteMany({
        where: { workspaceId, createdAt: { lt: new Date(now.getTime() - STALE_FILE_MS) } },
      });
      const others = await db.hubFile.count({ where: { workspaceId, name: { not: name } } });
      if (others >= MAX_HUB_FILES) return null;
      const body = vaultSeal(bytes.toString("base64"), tempContext(workspaceId, name));
      const { count } = await db.hubFile.updateMany({
        where: { workspaceId, name },
        data: { body, size: bytes.length, createdAt: now },
      });
      if (count > 0) return { created: false };
      await db.hubFile.create({
        data: { workspaceId, name, body, size: bytes.length, createdAt: now },
        select: { name: true },
      });
      return { created: true };
    },

    async removeTemp(workspaceId: number, name: string): Promise<boolean> {
      const { count } = await db.hubFile.deleteMany({ where: { workspaceId, name } });
      return count > 0;
    },

    async links(workspaceId: number): Promise<HubLink[]> {
      return db.hubLink.findMany({ where: { workspaceId }, select: linkSelect });
    },

    async saveLink(workspaceId: number, link: HubLink) {
      const { hubId, ...data } = link;
      await db.hubLink.upsert({
        where: { workspaceId_hubId: { workspaceId, hubId } },
        create: { workspaceId, hubId, ...data },
        update: data,
        select: { hubId: true },
      });
    },

    /** The file's accounts not saved here, and why. */
    async unsynced(workspaceId: number): Promise<{ name: string; message: string }[]> {
      const rows = await db.hubLink.findMany({
        where: { workspaceId, accountId: null, removedAt: null, refused: { not: null } },
        select: { name: true, refused: true },
        orderBy: { name: "asc" },
      });
      return rows.map((r) => ({ name: r.name ?? "", message: r.refused ?? "" }));
    },

    async dropLink(workspaceId: number, hubId: string) {
      await db.hubLink.deleteMany({ where: { workspaceId, hubId } });
    },

    /** A saved account was removed here: the extension is told at its next read (a deletion record). */
    async accountRemoved(workspaceId: number, accountId: number, now: Date) {
      await db.hubLink.updateMany({ where: { workspaceId, accountId }, data: { accountId: null, removedAt: now } });
    },

    async addRun(workspaceId: number, run: { at: Date; message: string | null; items: HubRunItem[] }) {
      await db.hubSyncRun.create({
        data: { workspaceId, at: run.at, message: run.message, items: JSON.stringify(run.items) },
        select: { id: true },
      });
      const old = await db.hubSyncRun.findMany({
        where: { workspaceId },
        select: { id: true },
        orderBy: { id: "desc" },
        skip: RUNS_KEPT,
        take: 100,
      });
      if (old.length > 0) await db.hubSyncRun.deleteMany({ where: { id: { in: old.map((r) => r.id) } } });
    },

    async runs(workspaceId: number, take: number): Promise<HubRun[]> {
      const rows = await db.hubSyncRun.findMany({
        where: { workspaceId },
        select: { id: true, at: true, message: true, items: true },
        orderBy: { id: "desc" },
        take,
      });
      return rows.map((r) => ({ ...r, items: JSON.parse(r.items) as HubRunItem[] }));
    },
  };
}

/** Moves the sync's sealed file, passphrase and temporary copies to the vault's current key (`vault-reseal`). */
export async function resealHubSync(db: Db): Promise<{ resealed: number; current: number; unopenable: number }> {
  const counts = { resealed: 0, current: 0, unopenable: 0 };
  const again = (sealed: string, context: string): string | null => {
    if (!sealedWithOlderKey(sealed)) {
      counts.current++;
      return null;
    }
    const next = reseal(sealed, context);
    if (next === null) counts.unopenable++;
    return next;
  };
  const syncs = await db.hubSync.findMany({ select: { workspaceId: true, file: true, passphrase: true } });
  for (const row of syncs) {
    for (const [column, context] of [
      ["file", fileContext(row.workspaceId)],
      ["passphrase", passContext(row.workspaceId)],
    ] as const) {
      const sealed = row[column];
      const next = sealed ? again(sealed, context) : null;
      if (sealed && next) {
        const { count } = await db.hubSync.updateMany({
          where: { workspaceId: row.workspaceId, [column]: sealed },
          data: { [column]: next },
        });
        counts.resealed += count;
      }
    }
  }
  const files = await db.hubFile.findMany({ select: { workspaceId: true, name: true, body: true } });
  for (const row of files) {
    const next = again(row.body, tempContext(row.workspaceId, row.name));
    if (!next) continue;
    const { count } = await db.hubFile.updateMany({
      where: { workspaceId: row.workspaceId, name: row.name, body: row.body },
      data: { body: next },
    });
    counts.resealed += count;
  }
  return counts;
}
