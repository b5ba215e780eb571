/**
 * A whole workspace in one file, encrypted with a passphrase the person chooses (docs/design.md 26),
 * and restored from it into an empty workspace on any server. The file is All API Hub's encrypted
 * envelope around an All API Hub 4.0 backup: the accounts with their access tokens as the
 * extension's records (so the extension reads it where it reads an encrypted file, its WebDAV
 * sync), their tags in its tag store, pins and order; what only this service has rides in a
 * section of its own, `gatewayDashboard`: aliases, 不计入合计, 自动签到, the alert zone, channels
 * (with their secrets), rules and digests. A restore verifies every account with its site before
 * it is saved, as an import does.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { alertChannels } from "../alerts/channels";
import { alertDigests, type DigestInput } from "../alerts/digests";
import type { RuleKind } from "../alerts/engine";
import { alertRules } from "../alerts/rules";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import { envelopeOf, openEnvelope, sealEnvelope } from "../hub/envelope";
import { accountsSection, emptyFile, newHubId, newRecord, readHubFile, recordFields } from "../hub/file";
import { accountsWithTokens } from "../hub/sync";
import type { ProbeOptions } from "../sites/probe";
import type { SavedAccounts } from "../workspace/saved-accounts";
import { hubCandidate, importAccounts, tagNamesOf, type ImportOutcome } from "../workspace/transfer";

const BACKUP_MSG = {
  shortPassphrase: "备份密码至少需要 8 个字符",
  notEmpty: "只能恢复到还没有账户的工作区：请新建一个工作区再恢复",
  wrongPassphrase: "备份密码不正确，或文件已损坏",
  noAccounts: "备份文件中没有账户",
  busy: "这个工作区正在恢复备份，请等这次恢复结束后再试",
} as const;

const ids = z.array(z.number().int()).max(1000);
const text = (max: number) => z.string().max(max);

/** What only this service keeps, as a file must hold it: parsed whole before anything is saved. */
const sectionSchema = z.object({
  format: z.literal(1).optional(),
  workspace: text(200).optional(),
  exportedAt: text(100).optional(),
  accounts: z
    .array(
      z.object({
        id: text(200),
        alias: text(200).nullable(),
        tags: z.array(text(200)).max(100),
        pinned: z.boolean(),
        excluded: z.boolean(),
        autoCheckin: z.boolean(),
        order: z.number().int(),
      }),
    )
    .max(10_000),
  alerts: z
    .object({
      timeZone: text(100),
      channels: z
        .array(
          z.object({
            id: z.number().int(),
            type: text(40),
            name: text(200),
            target: text(1000),
            settings: z.unknown(),
          }),
        )
        .max(100),
      rules: z
        .array(
          z.object({
            kind: text(60),
            account: text(200),
            threshold: z.number().nullable(),
            step: z.number().nullable(),
            channels: ids,
            remind: z.boolean(),
            muted: z.boolean(),
          }),
        )
        .max(1000),
      digests: z
        .array(z.object({ cadence: text(20), time: text(10), weekday: z.number().int().nullable(), channels: ids }))
        .max(100),
    })
    .optional(),
});

type Section = z.infer<typeof sectionSchema> & { alerts: NonNullable<z.infer<typeof sectionSchema>["alerts"]> };
type AccountExtra = Section["accounts"][number];

/** The file's own section, parsed: null when it has none; a refusal naming the first field of a wrong type. */
function sectionOf(data: Record<string, unknown>): z.infer<typeof sectionSchema> | null {
  if (data.gatewayDashboard === undefined) return null;
  const parsed = sectionSchema.safeParse(data.gatewayDashboard);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues[0]?.path.join(".") ?? "";
  throw new Refusal(
    `备份文件无法读取：gatewayDashboard${where ? `.${where}` : ""} 的内容不对，未恢复任何内容`,
    "BAD_REQUEST",
  );
}

const checkPassphrase = (passphrase: string) => {
  if ([...passphrase.trim()].length < 8) throw new Refusal(BACKUP_MSG.shortPassphrase, "BAD_REQUEST");
};

/** A tag's id in the file: the same name gives the same id, whoever writes it. */
const tagId = (name: string) => `tag-${createHash("sha256").update(name).digest("hex").slice(0, 32)}`;

/** The workspace as an encrypted backup file: its name and text. */
export async function workspaceBackup(
  db: Db,
  accounts: SavedAccounts,
  workspace: { id: number; name: string },
  passphrase: string,
  now = new Date(),
): Promise<{ filename: string; text: string; accounts: number }> {
  checkPassphrase(passphrase);
  const at = now.getTime();
  const { mine } = await accountsWithTokens(db, accounts, workspace.id, now);
  const file = emptyFile(at);
  const section = accountsSection(file);
  const tags = new Map<string, { id: string; name: string; createdAt: number; updatedAt: number }>();
  const extras: AccountExtra[] = [];
  const hubIds = new Map<number, string>();
  for (const a of mine.values()) {
    const id = newHubId();
    hubIds.set(a.saved.id, id);
    const record = newRecord(id, a, a.saved.stateAt.getTime(), at);
    record.tagIds = a.saved.tags.map((name) => {
      const t = tags.get(name) ?? { id: tagId(name), name, createdAt: at, updatedAt: at };
      tags.set(name, t);
      return t.id;
    });
    section.accounts.push(record);
    extras.push({
      id,
      alias: a.saved.alias,
      tags: a.saved.tags,
      pinned: a.saved.pinned,
      excluded: a.saved.excluded,
      autoCheckin: a.saved.autoCheckin,
      order: a.saved.order,
    });
  }
  section.pinnedAccountIds = extras.filter((e) => e.pinned).map((e) => e.id);
  section.orderedAccountIds = extras.map((e) => e.id);
  file.tagStore = { version: 1, tagsById: Object.fromEntries([...tags.values()].map((t) => [t.id, t])) };
  const [{ timeZone }, channels, rules, digests] = await Promise.all([
    alertRules(db).settings(workspace.id),
    alertChannels(db).exported(workspace.id),
    alertRules(db).list(workspace.id),
    alertDigests(db).list(workspace.id),
  ]);
  const gatewayDashboard: Section = {
    format: 1,
    workspace: workspace.name,
    exportedAt: now.toISOString(),
    accounts: extras,
    alerts: {
      timeZone,
      channels,
      rules: rules.flatMap((r) => {
        const account = r.accountId === null ? "all" : hubIds.get(r.accountId);
        return account === undefined
          ? []
          : [
              {
                kind: r.kind,
                account,
                threshold: r.threshold,
                step: r.step,
                channels: r.channels,
                remind: r.remind,
                muted: r.muted,
              },
            ];
      }),
      digests: digests.map((d) => ({ cadence: d.cadence, time: d.time, weekday: d.weekday, channels: d.channels })),
    },
  };
  file.gatewayDashboard = gatewayDashboard;
  const text = await sealEnvelope(JSON.stringify(file, null, 2), passphrase);
  return { filename: `workspace-backup-${now.toISOString().slice(0, 10)}.json`, text, accounts: extras.length };
}

export type RestoreResult = {
  outcomes: ImportOutcome[];
  alerts: { channels: number; rules: number; digests: number };
};

/**
 * Restores a backup into a workspace that has no account yet: the whole file read and checked
 * first (nothing is saved from a file that does not read), then every account verified with its
 * site and saved with its settings, then the alert zone, channels, rules and digests (the rules
 * made for a new workspace give way to the backup's). All or nothing: one restore of a workspace
 * at a time (a held row, across instances), what it makes recorded as it goes, and a restore that
 * fails, or whose process dies, undone whole (by the next restore, for a process that died).
 */
export async function restoreBackup(
  db: Db,
  deps: { accounts: SavedAccounts; probe: ProbeOptions; origin: string },
  workspaceId: number,
  body: string,
  passphrase: string,
  now = new Date(),
): Promise<RestoreResult> {
  // At once where no restore was left half done (its accounts are undone below, once the file reads).
  const left = await db.workspaceRestore.findUnique({ where: { workspaceId }, select: { workspaceId: true } });
  if (!left && (await deps.accounts.list(workspaceId)).length > 0) {
    throw new Refusal(BACKUP_MSG.notEmpty, "BAD_REQUEST");
  }
  let plain = body;
  const envelope = envelopeOf(body);
  if (envelope) {
    const opened = await openEnvelope(envelope, passphrase, `workspace:${workspaceId}`);
    if (opened === null) throw new Refusal(BACKUP_MSG.wrongPassphrase, "BAD_REQUEST");
    plain = opened;
  }
  const read = readHubFile(plain);
  if (!read.ok) throw new Refusal(`备份文件无法读取：${read.message}`, "BAD_REQUEST");
  const section = accountsSection(read.data);
  if (section.accounts.length === 0) throw new Refusal(BACKUP_MSG.noAccounts, "BAD_REQUEST");
  const ours = sectionOf(read.data);
  const tagNames = tagNamesOf(read.data);
  const pinned = new Set(Array.isArray(section.pinnedAccountIds) ? section.pinnedAccountIds.map(String) : []);
  const held = await restoreHold(db, deps.accounts, workspaceId);
  try {
    if ((await deps.accounts.list(workspaceId)).length > 0) throw new Refusal(BACKUP_MSG.notEmpty, "BAD_REQUEST");
    const outcomes = await importAccounts(
      db,
      deps.accounts,
      workspaceId,
      section.accounts.map((r) => hubCandidate(r, tagNames, pinned)),
      deps.probe,
      (id) => held.made("accounts", id),
    );
    const extras = new Map((ours?.accounts ?? []).map((e) => [e.id, e]));
    const restored = new Map<string, number>();
    for (const [i, outcome] of outcomes.entries()) {
      const record = section.accounts[i];
      const id = record ? recordFields(record).id : "";
      if (outcome.accountId === null) continue;
      restored.set(id, outcome.accountId);
      const extra = extras.get(id);
      if (!extra) continue;
      await deps.accounts.update(workspaceId, outcome.accountId, {
        alias: extra.alias,
        tags: extra.tags,
        pinned: extra.pinned,
        excluded: extra.excluded,
        autoCheckin: extra.autoCheckin,
        order: extra.order,
      });
    }
    const alerts = ours?.alerts
      ? await restoreAlerts(db, workspaceId, ours.alerts, restored, deps.origin, now, held.made)
      : null;
    await held.done();
    return { outcomes, alerts: alerts ?? { channels: 0, rules: 0, digests: 0 } };
  } catch (error) {
    await held.undo();
    throw error;
  }
}

type Made = { accounts?: number[]; channels?: number[]; rules?: number[]; digests?: number[] };

/** How long a restore's hold lasts unrenewed; it is renewed a third of that apart while the restore runs. */
const RESTORE_HOLD_MS = 20_000;

/**
 * The workspace's restore hold: taken (refused while another restore holds it), renewed while the
 * restore runs, what the restore makes recorded, and undone whole. A hold left by a process that
 * died (lapsed) is taken over: what that restore made is undone first.
 */
async function restoreHold(db: Db, accounts: SavedAccounts, workspaceId: number) {
  const until = () => new Date(Date.now() + RESTORE_HOLD_MS);
  const undoMade = async (made: Made) => {
    for (const id of made.accounts ?? []) await accounts.remove(workspaceId, id).catch(() => undefined);
    for (const id of made.digests ?? []) await alertDigests(db).remove(workspaceId, id);
    for (const id of made.rules ?? []) await alertRules(db).remove(workspaceId, id);
    for (const id of made.channels ?? []) await alertChannels(db).remove(workspaceId, id);
  };
  try {
    await db.workspaceRestore.create({ data: { workspaceId, heldUntil: until() }, select: { workspaceId: true } });
  } catch (error) {
    if ((error as { code?: string }).code !== "P2002") throw error;
    const lapsed = await db.workspaceRestore.findUnique({
      where: { workspaceId },
      select: { heldUntil: true, made: true },
    });
    const taken =
      lapsed !== null &&
      (
        await db.workspaceRestore.updateMany({
          where: {
            workspaceId,
            heldUntil: lapsed.heldUntil,
            made: lapsed.made,
            AND: { heldUntil: { lt: new Date() } },
          },
          data: { heldUntil: until() },
        })
      ).count === 1;
    if (!taken || lapsed === null) throw new Refusal(BACKUP_MSG.busy, "BAD_REQUEST");
    await undoMade(JSON.parse(lapsed.made) as Made);
    await db.workspaceRestore.update({ where: { workspaceId }, data: { made: "{}" }, select: { workspaceId: true } });
  }
  const made: Made = {};
  let writes = Promise.resolve();
  const renew = setInterval(() => {
    writes = writes.then(() =>
      db.workspaceRestore.updateMany({ where: { workspaceId }, data: { heldUntil: until() } }).then(
        () => undefined,
        () => undefined,
      ),
    );
  }, RESTORE_HOLD_MS / 3);
  renew.unref();
  const end = async () => {
    clearInterval(renew);
    await writes;
    await db.workspaceRestore.deleteMany({ where: { workspaceId } });
  };
  return {
    /** Records one thing the restore made, before the restore goes on. */
    made: async (kind: keyof Made, id: number) => {
      (made[kind] ??= []).push(id);
      const json = JSON.stringify(made);
      writes = writes.then(() =>
        db.workspaceRestore.updateMany({ where: { workspaceId }, data: { made: json } }).then(() => undefined),
      );
      await writes;
    },
    done: end,
    undo: async () => {
      await undoMade(made);
      await end();
    },
  };
}

async function restoreAlerts(
  db: Db,
  workspaceId: number,
  alerts: Section["alerts"],
  accounts: Map<string, number>,
  origin: string,
  now: Date,
  made: (kind: keyof Made, id: number) => Promise<void>,
): Promise<RestoreResult["alerts"]> {
  const rules = alertRules(db);
  await rules.settings(workspaceId, now);
  await rules.setTimeZone(workspaceId, alerts.timeZone).catch(() => undefined);
  const channels = new Map<number, number>();
  for (const channel of alerts.channels ?? []) {
    const id = await alertChannels(db).restored(workspaceId, channel, now);
    if (id !== null) {
      await made("channels", id);
      channels.set(channel.id, id);
    }
  }
  const mapped = (ids: number[]) => ids.flatMap((id) => (channels.has(id) ? [channels.get(id) as number] : []));
  // The rules a new workspace starts with give way to the backup's.
  for (const rule of await rules.list(workspaceId)) await rules.remove(workspaceId, rule.id);
  let ruleCount = 0;
  for (const rule of alerts.rules ?? []) {
    const account = rule.account === "all" ? "all" : accounts.get(rule.account);
    if (account === undefined) continue;
    try {
      const created = await rules.create(
        workspaceId,
        {
          kind: rule.kind as RuleKind,
          account,
          threshold: rule.threshold,
          step: rule.step,
          channels: mapped(rule.channels),
          remind: rule.remind,
          muted: rule.muted,
        },
        now,
      );
      await made("rules", created.id);
      ruleCount++;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
    }
  }
  let digestCount = 0;
  for (const digest of alerts.digests ?? []) {
    const input: DigestInput = {
      cadence: digest.cadence as DigestInput["cadence"],
      time: digest.time,
      weekday: digest.weekday,
      channels: mapped(digest.channels),
    };
    if (input.channels.length === 0) continue;
    try {
      const digest = await alertDigests(db).set(workspaceId, input, origin, now);
      await made("digests", digest.id);
      digestCount++;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
    }
  }
  return { channels: channels.size, rules: ruleCount, digests: digestCount };
}
