/**
 * All API Hub's optional encryption of its sync file (docs/design.md 26): a compact JSON envelope
 * `{type: "all-api-hub-webdav-backup-encrypted", v: 1, kdf: "PBKDF2", cipher: "AES-GCM", iter,
 * salt, iv, ct}`, the key PBKDF2-HMAC-SHA-256 of the trimmed passphrase (32 bytes), the text
 * sealed with AES-256-GCM (tag appended to `ct`, no additional data), each part standard base64.
 */
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from "node:crypto";
import { promisify } from "node:util";

const derive = promisify(pbkdf2);

const TYPE = "all-api-hub-webdav-backup-encrypted";
/** The iterations the extension writes with; a file's own count is used to open it. */
const ENVELOPE_ITERATIONS = 250_000;
/** More than this is not a passphrase's work but a way to keep the server busy. */
const MAX_ITERATIONS = 5_000_000;
const TAG_BYTES = 16;

type Envelope = { iter: number; salt: string; iv: string; ct: string };

/** The envelope a text is, recognised exactly as the extension does; null for a plain file. */
export function envelopeOf(text: string): Envelope | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  const e = parsed as Record<string, unknown>;
  if (e.type !== TYPE || e.v !== 1 || e.kdf !== "PBKDF2" || e.cipher !== "AES-GCM") return null;
  if (typeof e.iter !== "number" || typeof e.salt !== "string" || typeof e.iv !== "string" || typeof e.ct !== "string")
    return null;
  return { iter: e.iter, salt: e.salt, iv: e.iv, ct: e.ct };
}

const keyOf = (passphrase: string, salt: Buffer, iter: number) =>
  derive(Buffer.from(passphrase.trim(), "utf8"), salt, iter, 32, "sha256");

/** The text inside an envelope; null when the passphrase (or the envelope) is wrong. */
export async function openEnvelope(envelope: Envelope, passphrase: string): Promise<string | null> {
  if (!Number.isSafeInteger(envelope.iter) || envelope.iter < 1 || envelope.iter > MAX_ITERATIONS) return null;
  const salt = Buffer.from(envelope.salt, "base64");
  const iv = Buffer.from(envelope.iv, "base64");
  const sealed = Buffer.from(envelope.ct, "base64");
  if (iv.length === 0 || sealed.length < TAG_BYTES) return null;
  try {
    const key = await keyOf(passphrase, salt, envelope.iter);
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    return null;
  }
}

/** The text sealed in a new envelope (fresh salt and IV), written compact as the extension does. */
export async function sealEnvelope(text: string, passphrase: string, iter = ENVELOPE_ITERATIONS): Promise<string> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await keyOf(passphrase, salt, iter);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
  const b64 = (b: Buffer) => b.toString("base64");
  return JSON.stringify({
    type: TYPE,
    v: 1,
    kdf: "PBKDF2",
    cipher: "AES-GCM",
    iter,
    salt: b64(salt),
    iv: b64(iv),
    ct: b64(ct),
  });
}
