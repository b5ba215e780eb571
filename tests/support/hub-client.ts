/**
 * A stand-in of the All API Hub extension's WebDAV sync client, written from its protocol
 * (docs/design.md 26): the same requests in the same order (connection test, MKCOL, GET of the
 * file, MKCOL, PROPFIND cleanup, PUT of a temporary copy, GET read-back compared byte for byte,
 * MOVE into place), the same merge of accounts by id (newer `updated_at` wins, a tie keeps the
 * local one, deletion records weighed against `user_updated_at`), the three strategies, and the
 * optional encryption done with WebCrypto as the extension does it. Its local state is a
 * backup-shaped object; what it does not merge (bookmarks, preferences, tags, channel configs)
 * it keeps and uploads as it has them.
 */
import { randomBytes } from "node:crypto";

export type HubAccount = Record<string, unknown> & {
  id: string;
  site_url: string;
  updated_at: number;
  user_updated_at?: number;
  account_info: Record<string, unknown>;
};
type Tomb = { kind: "account" | "bookmark"; deletedAt: number; entryUpdatedAt: number };
export type HubLocal = {
  accounts: HubAccount[];
  bookmarks: Record<string, unknown>[];
  pinnedAccountIds: string[];
  orderedAccountIds: string[];
  deletedEntryRecords: Record<string, Tomb>;
  last_updated: number;
  /** The sections this client does not merge, uploaded as they are. */
  rest: Record<string, unknown>;
};

export type HubClientOptions = {
  base: string;
  user: string;
  pass: string;
  strategy?: "merge" | "upload_only" | "download_only";
  encPassword?: string;
  now?: () => number;
  /** Runs between the sync's read and its write (another device's sync in between, say). */
  beforeUpload?: () => Promise<void>;
};

export class HubSyncError extends Error {}

const FILE = "all-api-hub-backup/all-api-hub-1-0.json";
const b64 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes as Uint8Array).toString("base64");

async function keyOf(password: string, salt: Uint8Array<ArrayBuffer>, iter: number) {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(password.trim()), "PBKDF2", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations: iter },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

async function encryptLikeHub(text: string, password: string): Promise<string> {
  const salt = new Uint8Array(randomBytes(16));
  const iv = new Uint8Array(randomBytes(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await keyOf(password, salt, 250_000),
    new TextEncoder().encode(text),
  );
  return JSON.stringify({
    type: "all-api-hub-webdav-backup-encrypted",
    v: 1,
    kdf: "PBKDF2",
    cipher: "AES-GCM",
    iter: 250_000,
    salt: b64(salt),
    iv: b64(iv),
    ct: b64(ct),
  });
}

function envelopeOf(text: string): Record<string, unknown> | null {
  try {
    const e = JSON.parse(text) as Record<string, unknown>;
    return e.type === "all-api-hub-webdav-backup-encrypted" && e.v === 1 && typeof e.ct === "string" ? e : null;
  } catch {
    return null;
  }
}

export async function decryptLikeHub(envelope: Record<string, unknown>, password: string): Promise<string> {
  const bytes = (k: string) => new Uint8Array(Buffer.from(envelope[k] as string, "base64"));
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes("iv") },
    await keyOf(password, bytes("salt"), envelope.iter as number),
    bytes("ct"),
  );
  return new TextDecoder().decode(plain);
}

const userTime = (r: { user_updated_at?: number; updated_at?: number }) => r.user_updated_at ?? r.updated_at ?? 0;

export class HubClient {
  readonly trace: { method: string; path: string; status: number }[] = [];
  local: HubLocal;
  readonly file: string;
  readonly collection: string;
  private readonly now: () => number;

  constructor(
    private readonly options: HubClientOptions,
    local: Partial<HubLocal> = {},
  ) {
    const base = options.base;
    this.file = /\.json($|\?)/i.test(base) ? base : `${base}${base.endsWith("/") ? "" : "/"}${FILE}`;
    this.collection = this.file.includes("all-api-hub-backup/")
      ? this.file.slice(0, this.file.indexOf("all-api-hub-backup/") + "all-api-hub-backup".length)
      : this.file.slice(0, this.file.lastIndexOf("/"));
    this.now = options.now ?? Date.now;
    this.local = {
      accounts: [],
      bookmarks: [],
      pinnedAccountIds: [],
      orderedAccountIds: [],
      deletedEntryRecords: {},
      last_updated: 0,
      rest: {},
      ...local,
    };
  }

  private async send(method: string, url: string, headers: Record<string, string> = {}, body?: string) {
    const auth = `Basic ${Buffer.from(`${this.options.user}:${this.options.pass}`, "latin1").toString("base64")}`;
    const res = await fetch(url, { method, headers: { Authorization: auth, ...headers }, body, redirect: "manual" });
    const text = await res.text();
    this.trace.push({ method, path: new URL(url).pathname, status: res.status });
    return { status: res.status, text };
  }

  async testConnection(): Promise<void> {
    const base = this.options.base;
    const r = /\.json$/i.test(new URL(base).pathname)
      ? await this.send("GET", base)
      : await this.send("PROPFIND", base, { Depth: "0" });
    if (r.status === 401 || r.status === 403) throw new HubSyncError("authFailed");
    if (r.status < 200 || r.status > 499) throw new HubSyncError(`connectionFailed ${r.status}`);
  }

  private async mkcol() {
    const r = await this.send("MKCOL", this.collection);
    if (!(r.status >= 200 && r.status < 300) && r.status !== 405 && !this.collection.endsWith("/"))
      await this.send("MKCOL", `${this.collection}/`);
  }

  /** The remote file's data; null when there is none. */
  async download(prepareForWrite: boolean): Promise<Record<string, unknown> | null> {
    if (prepareForWrite) await this.mkcol();
    const r = await this.send("GET", this.file, { Accept: "application/json" });
    if (r.status === 404 || (r.status === 409 && r.text.includes("AncestorsNotFound"))) return null;
    if (r.status === 401 || r.status === 403) throw new HubSyncError("authFailed");
    if (r.status < 200 || r.status >= 300) throw new HubSyncError(`downloadFailed ${r.status}`);
    if (prepareForWrite && r.text.trim() === "") return null;
    let text = r.text;
    const envelope = envelopeOf(text);
    if (envelope) {
      if (!this.options.encPassword) throw new HubSyncError("decryptFailedNoPassword");
      text = await decryptLikeHub(envelope, this.options.encPassword);
    }
    const data = JSON.parse(text) as Record<string, unknown>;
    if (data.version !== undefined && !["1.0", "2.0", "3.0", "4.0"].includes(data.version as string))
      throw new HubSyncError("VERSION_NOT_SUPPORTED");
    return data;
  }

  async upload(text: string): Promise<void> {
    const body = this.options.encPassword ? await encryptLikeHub(text, this.options.encPassword) : text;
    await this.mkcol();
    const cleanup = this.send("PROPFIND", this.collection, { Depth: "1" }).catch(() => undefined);
    const stamp = new Date(this.now())
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d{3}/, "");
    const suffix = [...randomBytes(6)].map((b) => b.toString(36).padStart(2, "0")).join("");
    const temp = `${this.collection}/${encodeURIComponent(`all-api-hub-1-0.json.tmp.${stamp}.${suffix}`)}`;
    const put = await this.send("PUT", temp, { "Content-Type": "application/json" }, body);
    await cleanup;
    if (put.status === 401 || put.status === 403) throw new HubSyncError("authFailed");
    if (put.status < 200 || put.status >= 300) throw new HubSyncError(`uploadFailed ${put.status}`);
    try {
      const back = await this.send("GET", temp, { Accept: "application/json" });
      if (back.status < 200 || back.status >= 300 || back.text !== body)
        throw new HubSyncError("uploadVerificationFailed");
      let moved = await this.send("MOVE", temp, { Destination: new URL(this.file).toString(), Overwrite: "T" });
      if (moved.status === 409 || moved.status === 500) {
        await this.send("DELETE", this.file);
        moved = await this.send("MOVE", temp, { Destination: new URL(this.file).toString(), Overwrite: "T" });
      }
      if (moved.status < 200 || moved.status >= 300)
        throw new HubSyncError(`safeCommitFailed ${moved.status} ${moved.text}`);
    } catch (error) {
      await this.send("DELETE", temp).catch(() => undefined);
      throw error;
    }
  }

  private suppressed(r: HubAccount, tombs: Record<string, Tomb>): boolean {
    const t = tombs[r.id];
    return t !== undefined && t.kind === "account" && userTime(r) <= Math.max(t.deletedAt, t.entryUpdatedAt);
  }

  /** One sync, as the extension's scheduled run does it. */
  async syncOnce(): Promise<void> {
    const strategy = this.options.strategy ?? "merge";
    await this.testConnection();
    const remote = await this.download(true);
    const section = (remote?.accounts ?? null) as Record<string, unknown> | null;
    if (remote && section && strategy === "merge") {
      const tombs = { ...this.local.deletedEntryRecords };
      for (const [id, t] of Object.entries((section.deletedEntryRecords ?? {}) as Record<string, Tomb>)) {
        if (!tombs[id] || t.deletedAt > tombs[id].deletedAt) tombs[id] = t;
      }
      const merged = new Map<string, HubAccount>();
      for (const a of this.local.accounts) if (!this.suppressed(a, tombs)) merged.set(a.id, a);
      for (const r of (section.accounts ?? []) as HubAccount[]) {
        const mine = merged.get(r.id);
        if (!mine) {
          if (!this.suppressed(r, tombs)) merged.set(r.id, r);
        } else if (r.updated_at > mine.updated_at) merged.set(r.id, r);
      }
      for (const id of merged.keys()) delete tombs[id];
      const remoteOrdered = section.orderedAccountIds as string[] | undefined;
      if (remoteOrdered && ((section.last_updated as number) ?? 0) > this.local.last_updated)
        this.local.orderedAccountIds = remoteOrdered;
      this.local.accounts = [...merged.values()];
      this.local.deletedEntryRecords = tombs;
      this.local.pinnedAccountIds = [
        ...new Set([...((section.pinnedAccountIds as string[]) ?? []), ...this.local.pinnedAccountIds]),
      ].filter((id) => merged.has(id) || this.local.bookmarks.some((b) => b.id === id));
      for (const key of ["preferences", "tagStore", "channelConfigs", "apiCredentialProfiles"]) {
        if (remote[key] !== undefined && this.local.rest[key] === undefined) this.local.rest[key] = remote[key];
      }
    } else if (remote && section && strategy === "download_only") {
      if (Array.isArray(section.accounts)) this.local.accounts = section.accounts as HubAccount[];
      if (Array.isArray(section.bookmarks)) this.local.bookmarks = section.bookmarks as Record<string, unknown>[];
    }
    const now = this.now();
    this.local.last_updated = now;
    const payload = {
      ...(remote ?? {}),
      version: "4.0",
      timestamp: now,
      channelConfigs: this.local.rest.channelConfigs ?? { schemaVersion: 1, configs: {} },
      accounts: {
        accounts: this.local.accounts,
        bookmarks: this.local.bookmarks,
        pinnedAccountIds: this.local.pinnedAccountIds,
        orderedAccountIds: this.local.orderedAccountIds,
        deletedEntryRecords: this.local.deletedEntryRecords,
        last_updated: now,
      },
      ...Object.fromEntries(Object.entries(this.local.rest).filter(([k]) => k !== "channelConfigs")),
    };
    await this.options.beforeUpload?.();
    await this.upload(JSON.stringify(payload, null, 2));
  }

  account(id: string): HubAccount | undefined {
    return this.local.accounts.find((a) => a.id === id);
  }

  /** A person's edit in the extension: a new token (or anything else of the record). */
  edit(id: string, change: (a: HubAccount) => void): void {
    const a = this.account(id);
    if (!a) throw new Error(`no account ${id}`);
    change(a);
    a.updated_at = this.now();
    a.user_updated_at = this.now();
  }

  /** A person's deletion in the extension: the record goes, a deletion record stays. */
  remove(id: string): void {
    const a = this.account(id);
    if (!a) throw new Error(`no account ${id}`);
    this.local.accounts = this.local.accounts.filter((x) => x.id !== id);
    this.local.pinnedAccountIds = this.local.pinnedAccountIds.filter((x) => x !== id);
    this.local.orderedAccountIds = this.local.orderedAccountIds.filter((x) => x !== id);
    this.local.deletedEntryRecords[id] = { kind: "account", deletedAt: this.now(), entryUpdatedAt: userTime(a) };
  }
}

/** An account record as the extension writes one (V7). */
export function hubAccount(
  id: string,
  site: { url: string; name: string; type?: string },
  user: { id: number; token: string; username: string },
  at: number,
  more: Record<string, unknown> = {},
): HubAccount {
  return {
    id,
    site_name: site.name,
    site_url: site.url,
    health: { status: "healthy" },
    site_type: site.type ?? "new-api",
    exchange_rate: 7.2,
    account_info: {
      id: String(user.id),
      access_token: user.token,
      username: user.username,
      quota: 2_500_000,
      today_prompt_tokens: 0,
      today_completion_tokens: 0,
      today_quota_consumption: 0,
      today_requests_count: 0,
      today_income: 0,
    },
    last_sync_time: at,
    updated_at: at,
    user_updated_at: at,
    created_at: at,
    notes: "",
    tagIds: [],
    disabled: false,
    excludeFromTotalBalance: false,
    excludeFromTodayIncome: false,
    authType: "access_token",
    checkIn: { automaticExecutionEnabled: true, methodKnowledge: { methods: {} }, selection: { mode: "automatic" } },
    configVersion: 7,
    ...more,
  };
}
