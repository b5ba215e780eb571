/**
 * The vault: secrets kept at rest (a saved account's access token; later a channel's secret),
 * sealed with AES-256-GCM (docs/design.md 17). The keys are a rotation map, from `VAULT_KEY` or, when
 * it is unset, derived from the session password's map (HKDF-SHA256, one key per id): the highest
 * id seals, every listed id unseals, and `reseal` moves a value to the newest key.
 *
 * A sealed value is `v1.<key>.<iv>.<ciphertext>.<tag>` (base64url; the key is `k<id>` from
 * VAULT_KEY or `s<id>` from the session password). It is bound to what it
 * belongs to (`context`, authenticated but not stored): a value copied to another row, another
 * workspace or another account does not open there.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { env } from "../core/env";
import { parseSecretMap, passwords, type PasswordMap } from "./passwords";

type Keys = { newest: string; byId: Map<string, Buffer> };

const derivedKeys = new WeakMap<PasswordMap, Map<string, Buffer>>();
let fromEnv: { raw: string; keys: Map<string, Buffer> } | undefined;
/** A key map set by the process itself (tests of rotation), in place of VAULT_KEY. */
let override: string | undefined;

/** Replaces VAULT_KEY for this process (undefined: back to the environment). */
export function setVaultKeys(raw: string | undefined): void {
  override = raw;
}

/** The map's keys, named `<source><id>`: `k` for VAULT_KEY's, `s` for those derived from the session password. */
function keysOf(map: PasswordMap, source: "k" | "s", salt: string): Map<string, Buffer> {
  const byId = new Map<string, Buffer>();
  for (const [id, secret] of Object.entries(map)) {
    byId.set(`${source}${id}`, Buffer.from(hkdfSync("sha256", secret, salt, "aes-256-gcm", 32)));
  }
  return byId;
}

const newestOf = (keys: Map<string, Buffer>) =>
  [...keys.keys()].sort((a, b) => Number(b.slice(1)) - Number(a.slice(1)))[0] as string;

/**
 * The vault's keys: VAULT_KEY's map seals when it is set, else the session password's; both
 * unseal, so setting VAULT_KEY later loses nothing (`reseal` then moves the old values over).
 */
function vaultKeys(): Keys {
  const map = passwords();
  let derived = derivedKeys.get(map);
  if (!derived) {
    derived = keysOf(map, "s", "gd-vault-session-password");
    derivedKeys.set(map, derived);
  }
  const raw = override ?? env().VAULT_KEY;
  if (!raw) return { newest: newestOf(derived), byId: derived };
  if (fromEnv?.raw !== raw) fromEnv = { raw, keys: keysOf(parseSecretMap("VAULT_KEY", raw), "k", "gd-vault-key") };
  return { newest: newestOf(fromEnv.keys), byId: new Map([...derived, ...fromEnv.keys]) };
}

const SHAPE = /^v1\.([ks]\d{1,6})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{22})$/;

export function vaultSeal(plain: string, context: string): string {
  const { newest, byId } = vaultKeys();
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", byId.get(newest) as Buffer, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  const b64 = (b: Buffer) => b.toString("base64url");
  return `v1.${newest}.${b64(iv)}.${b64(body)}.${b64(cipher.getAuthTag())}`;
}

/** The secret, or null for anything tampered, bound to another context, or sealed by a key not listed now. */
export function vaultOpen(sealed: string, context: string): string | null {
  const m = SHAPE.exec(sealed);
  if (!m) return null;
  const key = vaultKeys().byId.get(m[1] as string);
  if (!key) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(m[2] as string, "base64url"));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(Buffer.from(m[4] as string, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(m[3] as string, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    return null;
  }
}

/** Whether a sealed value names a key older than the newest (a reseal would move it). */
export function sealedWithOlderKey(sealed: string): boolean {
  const id = SHAPE.exec(sealed)?.[1];
  return id !== undefined && id !== vaultKeys().newest;
}

/** The value sealed again under the newest key; null when it cannot be opened (left as it is). */
export function reseal(sealed: string, context: string): string | null {
  const plain = vaultOpen(sealed, context);
  return plain === null ? null : vaultSeal(plain, context);
}
