/**
 * A workspace's optional second factor (docs/design.md 17): TOTP (RFC 6238, the authenticator apps'
 * 30-second six-digit codes, with `otplib`) and ten recovery codes shown once. The secret is kept
 * sealed in the vault, bound to the workspace; recovery codes only as SHA-256 hashes, each good
 * once; a code is accepted one step either side of now, and never twice (the last step used is
 * kept), so a code seen over someone's shoulder cannot be replayed.
 */
import { createHash, randomBytes } from "node:crypto";
import { generateSecret, generateURI, verify } from "otplib";
import QRCode from "qrcode";
import { Refusal, WrongSecret } from "../core/errors";
import { verifyPassword } from "../core/password";
import type { Db } from "../db/client";
import { vaultOpen, vaultSeal } from "../session/vault";

const RECOVERY_CODES = 10;
const STEP_SECONDS = 30;

const TOTP_MSG = {
  required: "该工作区已开启两步验证，请输入验证器中的 6 位验证码或一个恢复码",
  wrong: "两步验证码错误或已使用",
  setupWrong: "验证码不正确，请确认验证器中的时间与名称后重试",
  already: "两步验证已开启",
  notOn: "两步验证尚未开启",
  wrongPassword: "当前密码错误",
} as const;

const context = (workspaceId: number) => `workspace-totp:${workspaceId}`;
const hashCode = (code: string) =>
  createHash("sha256")
    .update(`ws-recovery:${code.replace(/[\s-]/g, "").toLowerCase()}`)
    .digest("hex");

/** A recovery code as shown: 10 characters in two groups (`k3f9a-2mxq7`). */
function newRecoveryCode(): string {
  const raw = randomBytes(8).toString("base64url").replace(/[-_]/g, "").toLowerCase().padEnd(10, "x").slice(0, 10);
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

/** The step a six-digit code was made for, when it matches one step either side of now; null when not. */
async function matchingStep(secret: string, token: string, now: number): Promise<number | null> {
  if (!/^\d{6}$/.test(token)) return null;
  const result = await verify({ secret, token, epochTolerance: STEP_SECONDS, epoch: Math.floor(now / 1000) });
  if (!result.valid) return null;
  return Math.floor(now / 1000 / STEP_SECONDS) + (result.delta ?? 0);
}

export function totp(db: Db) {
  async function row(workspaceId: number) {
    const found = await db.workspace.findUnique({
      where: { id: workspaceId },
      select: { name: true, passwordHash: true, totpSecret: true, recoveryCodes: true, totpLastStep: true },
    });
    if (!found) throw new Refusal("工作区不存在", "NOT_FOUND");
    return found;
  }

  async function checkPassword(hash: string, password: string) {
    if (!(await verifyPassword(password, hash))) throw new WrongSecret(TOTP_MSG.wrongPassword, "BAD_REQUEST");
  }

  return {
    async enabled(workspaceId: number): Promise<boolean> {
      return (await row(workspaceId)).totpSecret !== null;
    },

    /** A new secret for the person's authenticator: its otpauth address and a QR code of it (SVG). */
    async begin(workspaceId: number) {
      const { name, totpSecret } = await row(workspaceId);
      if (totpSecret !== null) throw new Refusal(TOTP_MSG.already, "BAD_REQUEST");
      const secret = generateSecret();
      const uri = generateURI({ issuer: "网关站点控制台", label: name, secret });
      const svg = await QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
      return { secret, uri, qrSvg: svg };
    },

    /**
     * Turns the second factor on once the authenticator shows a code for the secret `begin` gave
     * (and the password is right); answers the recovery codes, shown this once.
     */
    async enable(workspaceId: number, input: { secret: string; code: string; password: string }, now = Date.now()) {
      const current = await row(workspaceId);
      if (current.totpSecret !== null) throw new Refusal(TOTP_MSG.already, "BAD_REQUEST");
      await checkPassword(current.passwordHash, input.password);
      if (!/^[A-Z2-7]{16,64}$/.test(input.secret)) throw new Refusal(TOTP_MSG.setupWrong, "BAD_REQUEST");
      const step = await matchingStep(input.secret, input.code.trim(), now);
      if (step === null) throw new Refusal(TOTP_MSG.setupWrong, "BAD_REQUEST");
      const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
      await db.workspace.update({
        where: { id: workspaceId },
        data: {
          totpSecret: vaultSeal(input.secret, context(workspaceId)),
          recoveryCodes: JSON.stringify(codes.map(hashCode)),
          totpLastStep: step,
        },
        select: { id: true },
      });
      return codes;
    },

    /** Turns it off, with the password and a current code (or a recovery code). */
    async disable(workspaceId: number, input: { code: string; password: string }, now = Date.now()) {
      const current = await row(workspaceId);
      if (current.totpSecret === null) throw new Refusal(TOTP_MSG.notOn, "BAD_REQUEST");
      await checkPassword(current.passwordHash, input.password);
      await this.check(workspaceId, input.code, now);
      await db.workspace.update({
        where: { id: workspaceId },
        data: { totpSecret: null, recoveryCodes: null, totpLastStep: null },
        select: { id: true },
      });
    },

    /**
     * The second step of a sign-in: nothing to do without a second factor; otherwise a current
     * code not used before, or an unused recovery code (spent now). Refuses in words.
     */
    async check(workspaceId: number, code: string | undefined, now = Date.now()): Promise<void> {
      const current = await row(workspaceId);
      if (current.totpSecret === null) return;
      const given = code?.trim() ?? "";
      if (given === "") throw new Refusal(TOTP_MSG.required, "UNAUTHORIZED");
      const secret = vaultOpen(current.totpSecret, context(workspaceId));
      const step = secret === null ? null : await matchingStep(secret, given, now);
      if (step !== null) {
        // One conditional update: a code (or a later one) already used is refused, also when two arrive at once.
        const { count } = await db.workspace.updateMany({
          where: { id: workspaceId, OR: [{ totpLastStep: null }, { totpLastStep: { lt: step } }] },
          data: { totpLastStep: step },
        });
        if (count === 1) return;
        throw new WrongSecret(TOTP_MSG.wrong, "UNAUTHORIZED");
      }
      const hashes = JSON.parse(current.recoveryCodes ?? "[]") as string[];
      const hash = hashCode(given);
      if (!hashes.includes(hash)) throw new WrongSecret(TOTP_MSG.wrong, "UNAUTHORIZED");
      const { count } = await db.workspace.updateMany({
        where: { id: workspaceId, recoveryCodes: current.recoveryCodes },
        data: { recoveryCodes: JSON.stringify(hashes.filter((h) => h !== hash)) },
      });
      if (count !== 1) throw new WrongSecret(TOTP_MSG.wrong, "UNAUTHORIZED");
    },

    /** How many recovery codes are left. */
    async recoveryLeft(workspaceId: number): Promise<number> {
      return (JSON.parse((await row(workspaceId)).recoveryCodes ?? "[]") as string[]).length;
    },
  };
}
