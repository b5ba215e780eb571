/**
 * Two-way sync with the All API Hub extension (docs/design.md 26), seen from the workspace.
 *
 * A write of the extension's file is merged the way the extension merges: accounts matched by
 * their id in the file; a change there (another address, user id or token) verified with its site
 * and saved when it is newer than this side's, kept out when this side's is newer; a deletion
 * record removes the saved account (or, by the workspace's setting, leaves it) unless this side
 * changed it after. A read gives the file back with this side's accounts in it: those added here
 * as new records, those changed here with the new address or token and a newer time, those
 * removed here taken out with a deletion record, today's check-ins told. Everything else of the
 * file (tags, notes, pins, order, bookmarks, preferences, channel configs) stays as the extension
 * wrote it. Each write's result, account by account, is kept for the 工作区 tab.
 */
import { siteDay } from "../actions/checkin";
import type { Db } from "../db/client";
import { Refusal } from "../core/errors";
import type { ProbeOptions } from "../sites/probe";
import { SAVED_MSG, siteIndex, savedName, type SavedAccount, type SavedAccounts } from "../workspace/saved-accounts";
import { hubCandidate, importAccounts, tagNamesOf } from "../workspace/transfer";
import { envelopeOf, openEnvelope, sealEnvelope } from "./envelope";
import {
  accountsSection,
  emptyFile,
  isRecord,
  newHubId,
  newRecord,
  overlayCheckin,
  overlayRecord,
  printOf,
  readHubFile,
  recordFields,
  recordPrint,
  removeRecord,
  tombstonesOf,
  userTime,
  type HubRecord,
  type OurAccount,
} from "./file";
import { hubStore, type HubLink, type HubRunItem } from "./store";

const HUB_MSG = {
  noPassphrase: "文件已加密，但工作区没有保存加密密码：请在工作区「All API Hub 同步」中填写与扩展相同的密码",
  wrongPassphrase: "文件已加密，工作区保存的密码无法解开：请确认与扩展中填写的加密密码一致",
  busy: "另一次同步正在进行，请稍后再试",
  newerHere: "此处的更改较新，已保留，下次同步会带回扩展",
  keptHere: "扩展中已删除；按工作区设置在此保留",
  sameAccount: "与文件中另一条记录是同一账户，只同步了那一条",
} as const;

export type HubSyncDeps = {
  accounts: SavedAccounts;
  probe: ProbeOptions;
  /** What else goes with an account removed by the extension's deletion (its open alerts). */
  removed?: (workspaceId: number, accountId: number) => Promise<void>;
};

const CHECKED_IN = new Set(["done", "already"]);

type OurAccountWithSaved = OurAccount & { saved: SavedAccount };
type OurState = { mine: Map<number, OurAccountWithSaved>; listed: Set<number> };

/** A workspace's accounts with their tokens opened, by id (an unopenable token leaves its account out). */
export async function accountsWithTokens(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  now: Date,
): Promise<OurState> {
  const sites = await siteIndex(db);
  const list = await accounts.list(workspaceId, sites);
  const tokens = await accounts.tokens(workspaceId);
  const mine = new Map<number, OurAccountWithSaved>();
  for (const saved of list) {
    const token = tokens.get(saved.id);
    if (token === undefined) continue;
    const site = sites.get(saved.siteId);
    const family = site?.family ?? null;
    const today = siteDay(family, now.getTime()).day;
    const checkin = saved.checkin;
    mine.set(saved.id, {
      saved,
      siteUrl: saved.siteUrl,
      siteName: site?.name ?? saved.siteUrl,
      family,
      userId: String(saved.siteUserId),
      token,
      username: saved.username,
      name: saved.alias || site?.name || saved.siteUrl,
      excluded: saved.excluded,
      autoCheckin: saved.autoCheckin,
      checkedInAt: checkin && checkin.day === today && CHECKED_IN.has(checkin.state) ? checkin.at : null,
      createdAt: saved.createdAt,
    });
  }
  return { mine, listed: new Set(list.map((a) => a.id)) };
}

export function hubSync(db: Db, deps: HubSyncDeps) {
  const store = hubStore(db);

  /**
   * Every saved account linked (a new id for one the file has not had), a change here stamped
   * with the time it was first seen, an account gone from the workspace marked removed.
   */
  async function observe(workspaceId: number, state: OurState, now: Date) {
    const links = new Map((await store.links(workspaceId)).map((l) => [l.hubId, l]));
    const linked = new Set<number>();
    for (const link of links.values()) {
      if (link.accountId === null) continue;
      if (!state.listed.has(link.accountId)) {
        await store.saveLink(workspaceId, Object.assign(link, { accountId: null, removedAt: now }));
        continue;
      }
      linked.add(link.accountId);
      const a = state.mine.get(link.accountId);
      if (!a) continue;
      const print = printOf(a.siteUrl, a.userId, a.token);
      if (print !== link.ours) await store.saveLink(workspaceId, Object.assign(link, { ours: print, oursAt: now }));
    }
    for (const [accountId, a] of state.mine) {
      if (linked.has(accountId)) continue;
      const link: HubLink = {
        hubId: newHubId(),
        accountId,
        ours: printOf(a.siteUrl, a.userId, a.token),
        oursAt: now,
        theirs: null,
        name: null,
        refused: null,
        removedAt: null,
        goneThereAt: null,
      };
      await store.saveLink(workspaceId, link);
      links.set(link.hubId, link);
    }
    return links;
  }

  /**
   * The file as the extension reads it now: its text (encrypted when the workspace's is), or null
   * when there is nothing. Taken under the workspace's hold: a read sees the file before a merge
   * or after it, never accounts a merge saved and has not linked yet.
   */
  async function read(workspaceId: number, now = new Date()): Promise<string | null> {
    if (!(await store.hold(workspaceId, 60_000))) throw new Refusal(HUB_MSG.busy, "SERVICE_UNAVAILABLE", 5);
    try {
      return await readHeld(workspaceId, now);
    } finally {
      await store.release(workspaceId);
    }
  }

  async function readHeld(workspaceId: number, now: Date): Promise<string | null> {
    const settings = await store.settings(workspaceId);
    const file = await store.file(workspaceId);
    const state = await accountsWithTokens(db, deps.accounts, workspaceId, now);
    const links = await observe(workspaceId, state, now);
    if (!file && state.mine.size === 0) return null;
    const parsed = file ? readHubFile(file.text) : null;
    const data = parsed?.ok ? parsed.data : emptyFile(now.getTime());
    const section = accountsSection(data);
    const tombs = tombstonesOf(section);
    const index = new Map(section.accounts.map((r) => [recordFields(r).id, r]));
    let changed = !parsed?.ok;
    const at = now.getTime();
    for (const link of links.values()) {
      const record = index.get(link.hubId);
      if (link.removedAt !== null) {
        const removedAt = link.removedAt.getTime();
        // Changed there after it was removed here: the next write brings it back.
        if (record && userTime(record) > removedAt) continue;
        if (record || !tombs.has(link.hubId)) {
          removeRecord(section, link.hubId, removedAt, record ? userTime(record) : removedAt);
          changed = true;
        }
        continue;
      }
      if (link.accountId === null || link.goneThereAt !== null) continue;
      const a = state.mine.get(link.accountId);
      if (!a) continue;
      if (!record) {
        section.accounts.push(newRecord(link.hubId, a, link.oursAt.getTime(), at));
        if (isRecord(section.deletedEntryRecords)) delete section.deletedEntryRecords[link.hubId];
        changed = true;
        continue;
      }
      const there = recordPrint(record);
      // A change there that no merge took in (its write was cut short): the device keeps its own
      // value, and its next write is merged; it is never set back to this side's older one.
      if (there !== link.ours && there !== link.theirs) {
        if (overlayCheckin(record, a, at)) changed = true;
        continue;
      }
      if (there !== link.ours) {
        overlayRecord(record, a, link.oursAt.getTime(), at);
        changed = true;
      }
      if (overlayCheckin(record, a, at)) changed = true;
    }
    await store.noteRead(workspaceId, now);
    let out = file?.text ?? "";
    if (changed) {
      data.version = "4.0";
      data.timestamp = at;
      out = JSON.stringify(data, null, 2);
    }
    const encrypt = file ? file.encrypted : settings.hasPassphrase;
    return encrypt && settings.passphrase
      ? sealEnvelope(out, settings.passphrase, { holder: `workspace:${workspaceId}` })
      : out;
  }

  /** Merges a write of the extension's file; why it was refused, else what became of each account. */
  async function write(
    workspaceId: number,
    body: string,
    now = new Date(),
  ): Promise<{ ok: true; items: HubRunItem[] } | { ok: false; message: string; busy?: boolean }> {
    if (!(await store.hold(workspaceId, 60_000))) return { ok: false, message: HUB_MSG.busy, busy: true };
    try {
      const outcome = await merge(workspaceId, body, now);
      await store.addRun(workspaceId, {
        at: now,
        message: outcome.ok ? null : outcome.message,
        items: outcome.ok ? outcome.items : [],
      });
      return outcome;
    } finally {
      await store.release(workspaceId);
    }
  }

  async function merge(
    workspaceId: number,
    body: string,
    now: Date,
  ): Promise<{ ok: true; items: HubRunItem[] } | { ok: false; message: string }> {
    const settings = await store.settings(workspaceId);
    let plain = body;
    const envelope = envelopeOf(body);
    if (envelope) {
      if (!settings.passphrase) return { ok: false, message: HUB_MSG.noPassphrase };
      const opened = await openEnvelope(envelope, settings.passphrase, `workspace:${workspaceId}`);
      if (opened === null) return { ok: false, message: HUB_MSG.wrongPassphrase };
      plain = opened;
    }
    const parsed = readHubFile(plain);
    if (!parsed.ok) return { ok: false, message: `文件未被接受：${parsed.message}` };
    // The file itself is the extension's (its last write wins, as on any WebDAV server).
    await store.setFile(workspaceId, { text: plain, encrypted: envelope !== null }, now);
    const section = accountsSection(parsed.data);
    const tombs = tombstonesOf(section);
    const records = new Map<string, HubRecord>();
    for (const r of section.accounts) {
      const id = recordFields(r).id;
      if (id !== "" && !records.has(id)) records.set(id, r);
    }
    const state = await accountsWithTokens(db, deps.accounts, workspaceId, now);
    const links = await observe(workspaceId, state, now);
    const items: HubRunItem[] = [];
    const nameOf = (r: HubRecord) => {
      const f = recordFields(r);
      return [f.siteName || f.siteUrl, f.username].filter(Boolean).join(" · ");
    };

    // Deleted in the extension: removed here (or left, by the setting) unless changed here since.
    for (const link of [...links.values()]) {
      const tomb = tombs.get(link.hubId);
      if (link.accountId === null || link.goneThereAt !== null || records.has(link.hubId) || !tomb) continue;
      const a = state.mine.get(link.accountId);
      const name = a ? savedName(a.saved) : `账户 ${link.accountId}`;
      if (link.oursAt.getTime() > Math.max(tomb.deletedAt, tomb.entryUpdatedAt)) {
        items.push({ result: "kept", name, message: HUB_MSG.newerHere });
      } else if (settings.deletes === "remove") {
        await deps.accounts.remove(workspaceId, link.accountId);
        await deps.removed?.(workspaceId, link.accountId);
        // The link stays as the deletion's tombstone: a device's older copy of the account (its
        // write after this one) does not bring it back; a change made there since does.
        const deletedAt = new Date(Math.max(tomb.deletedAt, tomb.entryUpdatedAt, 0));
        await store.saveLink(workspaceId, Object.assign(link, { accountId: null, removedAt: deletedAt }));
        items.push({ result: "removed", name, message: null });
      } else {
        await store.saveLink(workspaceId, Object.assign(link, { goneThereAt: now }));
        items.push({ result: "kept", name, message: HUB_MSG.keptHere });
      }
    }

    // An account not saved that the file no longer has is forgotten.
    for (const link of [...links.values()]) {
      if (link.accountId === null && link.removedAt === null && link.refused !== null && !records.has(link.hubId)) {
        await store.dropLink(workspaceId, link.hubId);
        links.delete(link.hubId);
      }
    }

    // The file's accounts: new or changed there are verified with their site.
    const toVerify: { record: HubRecord; link: HubLink | null }[] = [];
    for (const [hubId, record] of records) {
      const print = recordPrint(record);
      let link = links.get(hubId) ?? null;
      if (link?.removedAt) {
        // Removed here, and not changed there since: the extension takes the deletion at its next read.
        if (userTime(record) <= link.removedAt.getTime()) continue;
        await store.dropLink(workspaceId, hubId);
        links.delete(hubId);
        link = null;
      } else if (link?.goneThereAt) {
        await store.saveLink(workspaceId, Object.assign(link, { goneThereAt: null }));
      }
      if (link && link.accountId !== null) {
        if (print === link.ours || print === link.theirs) {
          if (link.theirs !== print) await store.saveLink(workspaceId, Object.assign(link, { theirs: print }));
          continue;
        }
        if (userTime(record) <= link.oursAt.getTime()) {
          await store.saveLink(workspaceId, Object.assign(link, { theirs: print }));
          items.push({ result: "kept", name: nameOf(record), message: HUB_MSG.newerHere });
          continue;
        }
        // Changed there and newer: its fingerprint is recorded once its token is saved (below), so
        // a merge cut short is merged again, never taken for one done.
      } else if (link && link.refused !== null && link.theirs === print) {
        // Not saved before, and nothing changed since: not asked again (the 工作区 tab lists it).
        continue;
      }
      toVerify.push({ record, link });
    }
    if (toVerify.length === 0) return { ok: true, items };

    const tagNames = tagNamesOf(parsed.data);
    const pinned = new Set(Array.isArray(section.pinnedAccountIds) ? section.pinnedAccountIds.map(String) : []);
    const outcomes = await importAccounts(
      db,
      deps.accounts,
      workspaceId,
      toVerify.map(({ record }) => hubCandidate(record, tagNames, pinned)),
      deps.probe,
    );
    for (const [i, outcome] of outcomes.entries()) {
      const { record, link } = toVerify[i] as (typeof toVerify)[number];
      const hubId = recordFields(record).id;
      const print = recordPrint(record);
      const name = nameOf(record);
      const accepted = outcome.accountId !== null && (outcome.result === "saved" || outcome.result === "updated");
      if (!accepted || outcome.accountId === null) {
        if (link) {
          // Not asked again while the file's account stays the same.
          await store.saveLink(workspaceId, Object.assign(link, { theirs: print }));
          items.push({ result: "refused", name, message: `${outcome.message ?? "未通过验证"}；保留了此处的令牌` });
          continue;
        }
        // Not saved (refused by its site, or another way of signing in): not asked again while the
        // file's account stays the same; a full workspace is tried again at the next write.
        if (outcome.message !== SAVED_MSG.tooMany)
          await store.saveLink(workspaceId, {
            hubId,
            accountId: null,
            ours: null,
            oursAt: now,
            theirs: print,
            name,
            refused: outcome.message ?? "未通过验证",
            removedAt: null,
            goneThereAt: null,
          });
        items.push({ result: outcome.result === "refused" ? "refused" : "skipped", name, message: outcome.message });
        continue;
      }
      // The saved account has an id of its own already: the file's takes its place unless the file has both.
      const other = [...links.values()].find((l) => l.accountId === outcome.accountId && l.hubId !== hubId);
      if (other && records.has(other.hubId)) {
        items.push({ result: "skipped", name, message: HUB_MSG.sameAccount });
        continue;
      }
      if (other) {
        await store.dropLink(workspaceId, other.hubId);
        links.delete(other.hubId);
      }
      const next: HubLink = {
        hubId,
        accountId: outcome.accountId,
        ours: print,
        oursAt: new Date(userTime(record) || now.getTime()),
        theirs: print,
        name: null,
        refused: null,
        removedAt: null,
        goneThereAt: null,
      };
      await store.saveLink(workspaceId, next);
      links.set(hubId, next);
      const unchanged = outcome.result === "updated" && outcome.message !== null;
      if (!unchanged || !other)
        items.push({
          result: link || outcome.result === "updated" ? "changed" : "added",
          name,
          message: outcome.message,
        });
    }
    return { ok: true, items };
  }

  return { read, write };
}
