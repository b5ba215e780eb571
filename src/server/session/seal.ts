import { createHash } from "node:crypto";
import { sealData, unsealData } from "iron-session";
import { passwords, type PasswordMap } from "./passwords";

/**
 * Iron seals with the configured passwords. A seal names its password by id; the id written is
 * the configured id joined with a fingerprint of the password itself, so replacing a password
 * under the same id (after a leak) makes everything it sealed unknown, not just unreadable.
 */
const FINGERPRINT_SPACE = 1_000_000_000;

function fingerprint(password: string): number {
  return createHash("sha256").update(password).digest().readUInt32BE(0) % FINGERPRINT_SPACE;
}

const derived = new WeakMap<PasswordMap, Record<string, string>>();

/** The passwords keyed as seals name them: id × 10⁹ + fingerprint (the highest id still seals). */
function sealPasswords(): Record<string, string> {
  const map = passwords();
  let keyed = derived.get(map);
  if (!keyed) {
    keyed = {};
    for (const [id, secret] of Object.entries(map)) {
      keyed[String(Number(id) * FINGERPRINT_SPACE + fingerprint(secret))] = secret;
    }
    derived.set(map, keyed);
  }
  return keyed;
}

/** Whether a seal was made with a password configured now, exactly (read from the seal, no crypto). */
export function sealedWithKnownPassword(sealed: string): boolean {
  const id = /^Fe26\.2\*(\d+)\*/.exec(sealed)?.[1];
  return id !== undefined && Object.hasOwn(sealPasswords(), id);
}

/** Seals a value with the newest password. `ttlSeconds` 0 means the seal itself never expires. */
export function seal(data: Record<string, unknown>, ttlSeconds: number): Promise<string> {
  return sealData(data, { password: sealPasswords(), ttl: ttlSeconds });
}

/** Unseals with any known password; null for anything tampered, expired or sealed by a password not configured now. */
export async function unseal<T extends Record<string, unknown>>(
  sealed: string,
  ttlSeconds: number,
): Promise<Partial<T> | null> {
  if (!sealedWithKnownPassword(sealed)) return null;
  try {
    const data = await unsealData<T>(sealed, { password: sealPasswords(), ttl: ttlSeconds });
    return Object.keys(data).length === 0 ? null : data;
  } catch {
    return null;
  }
}
