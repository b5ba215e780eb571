/**
 * All API Hub's optional encryption of its sync file (docs/design.md 26): a compact JSON envelope
 * `{type: "all-api-hub-webdav-backup-encrypted", v: 1, kdf: "PBKDF2", cipher: "AES-GCM", iter,
 * salt, iv, ct}`, the key PBKDF2-HMAC-SHA-256 of the trimmed passphrase (32 bytes), the text
 * sealed with AES-256-GCM (tag appended to `ct`, no additional data), each part standard base64.
 */
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import pLimit from "p-limit";

const pbkdf2Async = promisify(pbkdf2);

const TYPE = "all-api-hub-webdav-backup-encrypted";
/** The iterations the extension writes with; a file's own count is used to open it, up to this. */
const ENVELOPE_ITERATIONS = 250_000;
/** More than the extension's own is not a passphrase's work but a way to keep the server busy. */
const MAX_ITERATIONS = ENVELOPE_ITERATIONS;

/**
 * Derivations run in libuv's pool of four threads, beside the passwords' scrypt of every sign-in:
 * at most two at once in the process, and one at a time per holder (a workspace), so files sent
 * at once queue behind each other instead of taking the threads sign-ins need.
 */
const DERIVING = pLimit(2);
const holders = new Map<string, Promise<unknown>>();

function derive(passphrase: Buffer, salt: Buffer, iter: number, holder: string | undefined): Promise<Buffer> {
  const run = () => DERIVING(() => pbkdf2Async(passphrase, salt, iter, 32, "sha256"));
  if (holder === undefined) return run();
  const before = holders.get(holder) ?? Promise.resolve();
  const mine = before.then(run, run);
  const settled = mine.catch(() => undefined);
  holders.set(holder, settled);
  void settled.then(() => {
    if (holders.get(holder) === settled) holders.delete(holder);
  });
  return mine;
}
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

const keyOf = (passphrase: string, salt: Buffer, iter: number, holder: string | undefined) =>
  derive(Buffer.from(passphrase.trim(), "utf8"), salt, iter, holder);

/**
 * The text inside an envelope; null when the passphrase (or the envelope) is wrong, or its count
 * of iterations is more than the extension's. `holder` (a workspace) derives one key at a time.
 */
export async function openEnvelope(envelope: Envelope, passphrase: string, holder?: string): Promise<string | null> {
  if (!Number.isSafeInteger(envelope.iter) || envelope.iter < 1 || envelope.iter > MAX_ITERATIONS) return null;
  const salt = Buffer.from(envelope.salt, "base64");
  const iv = Buffer.from(envelope.iv, "base64");
  const sealed = Buffer.from(envelope.ct, "base64");
  if (iv.length === 0 || sealed.length < TAG_BYTES) return null;
  try {
    const key = await keyOf(passphrase, salt, envelope.iter, holder);
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
export async function sealEnvelope(
  text: string,
  passphrase: string,
  { iter = ENVELOPE_ITERATIONS, holder }: { iter?: number; holder?: string } = {},
): Promise<string> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await keyOf(passphrase, salt, iter, holder);
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
