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
import { alertChannels } from "../alerts/channels";
import { alertDigests, type DigestInput } from "../alerts/digests";
import type { RuleKind } from "../alerts/engine";
import { alertRules } from "../alerts/rules";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import { envelopeOf, openEnvelope, sealEnvelope } from "../hub/envelope";
import { accountsSection, emptyFile, isRecord, newHubId, newRecord, readHubFile, recordFields } from "../hub/file";
import { accountsWithTokens } from "../hub/sync";
import type { ProbeOptions } from "../sites/probe";
import type { SavedAccounts } from "../workspace/saved-accounts";
import { hubCandidate, importAccounts, tagNamesOf, type ImportOutcome } from "../workspace/transfer";

const BACKUP_MSG = {
  shortPassphrase: "备份密码至少需要 8 个字符",
  notEmpty: "只能恢复到还没有账户的工作区：请新建一个工作区再恢复",
  wrongPassphrase: "备份密码不正确，或文件已损坏",
  noAccounts: "备份文件中没有账户",
} as const;

type AccountExtra = {
  id: string;
  alias: string | null;
  tags: string[];
  pinned: boolean;
  excluded: boolean;
  autoCheckin: boolean;
  order: number;
};

type RuleExtra = {
  kind: string;
  account: string;
  threshold: number | null;
  step: number | null;
  channels: number[];
  remind: boolean;
  muted: boolean;
};

type Section = {
  format: 1;
  workspace: string;
  exportedAt: string;
  accounts: AccountExtra[];
  alerts: {
    timeZone: string;
    channels: { id: number; type: string; name: string; target: string; settings: unknown }[];
    rules: RuleExtra[];
    digests: { cadence: string; time: string; weekday: number | null; channels: number[] }[];
  };
};

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
 * Restores a backup into a workspace that has no account yet: every account verified with its
 * site and saved with its settings, then the alert zone, channels, rules and digests (the rules
 * made for a new workspace give way to the backup's).
 */
export async function restoreBackup(
  db: Db,
  deps: { accounts: SavedAccounts; probe: ProbeOptions; origin: string },
  workspaceId: number,
  body: string,
  passphrase: string,
  now = new Date(),
): Promise<RestoreResult> {
  if ((await deps.accounts.list(workspaceId)).length > 0) throw new Refusal(BACKUP_MSG.notEmpty, "BAD_REQUEST");
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
  const tagNames = tagNamesOf(read.data);
  const pinned = new Set(Array.isArray(section.pinnedAccountIds) ? section.pinnedAccountIds.map(String) : []);
  const outcomes = await importAccounts(
    db,
    deps.accounts,
    workspaceId,
    section.accounts.map((r) => hubCandidate(r, tagNames, pinned)),
    deps.probe,
  );
  const ours = isRecord(read.data.gatewayDashboard) ? (read.data.gatewayDashboard as Partial<Section>) : null;
  const extras = new Map((Array.isArray(ours?.accounts) ? ours.accounts : []).map((e) => [e.id, e]));
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
  const alerts = ours?.alerts ? await restoreAlerts(db, workspaceId, ours.alerts, restored, deps.origin, now) : null;
  return { outcomes, alerts: alerts ?? { channels: 0, rules: 0, digests: 0 } };
}

async function restoreAlerts(
  db: Db,
  workspaceId: number,
  alerts: Section["alerts"],
  accounts: Map<string, number>,
  origin: string,
  now: Date,
): Promise<RestoreResult["alerts"]> {
  const rules = alertRules(db);
  await rules.settings(workspaceId, now);
  await rules.setTimeZone(workspaceId, alerts.timeZone).catch(() => undefined);
  const channels = new Map<number, number>();
  for (const channel of alerts.channels ?? []) {
    const id = await alertChannels(db).restored(workspaceId, channel, now);
    if (id !== null) channels.set(channel.id, id);
  }
  const mapped = (ids: number[]) => ids.flatMap((id) => (channels.has(id) ? [channels.get(id) as number] : []));
  // The rules a new workspace starts with give way to the backup's.
  for (const rule of await rules.list(workspaceId)) await rules.remove(workspaceId, rule.id);
  let ruleCount = 0;
  for (const rule of alerts.rules ?? []) {
    const account = rule.account === "all" ? "all" : accounts.get(rule.account);
    if (account === undefined) continue;
    try {
      await rules.create(
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
      await alertDigests(db).set(workspaceId, input, origin, now);
      digestCount++;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
    }
  }
  return { channels: channels.size, rules: ruleCount, digests: digestCount };
}
