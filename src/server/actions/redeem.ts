/**
 * Redeeming a code on an account's site (gateway-actions.md §2.3 and the families'): checked
 * here first, sent once (never retried: a code is spent by the first call that reaches the site),
 * answered in words, recorded without the code, and the account's cached reads forgotten so the
 * balance shows what the code added.
 */
import type { Db } from "../db/client";
import { usdOf } from "../gateway/reads";
import { redeemRefusal, redeemRequest, redeemedQuota } from "../gateway/writes";
import { formatMoney } from "../../shared/money";
import { forgetAccountReads, siteProfile, siteWrite, type Account, type SiteDataDeps } from "../site-data/calls";
import { criticalLeft, retryIn, takeCritical } from "./critical";
import { recordAction, recordedSend, type Actor } from "./records";
import type { RedeemResult } from "./schemas";
import { Refusal } from "../core/errors";

/** Why an action was not made, in words; the caller answers it as the contract's failure. */
export class ActionRefused extends Refusal {}

/** Refused for its input before anything was sent: it spends none of the account's writes. */
export class InputRefused extends ActionRefused {}

/** A code is one word (the families issue 32 characters; a pasted one may carry spaces around it). */
const CODE = /^\S{1,128}$/u;

export async function redeem(
  db: Db,
  account: Account,
  actor: Actor,
  rawCode: string,
  deps: SiteDataDeps,
): Promise<RedeemResult> {
  const code = rawCode.trim();
  if (code === "") throw new InputRefused("请填写兑换码");
  if (!CODE.test(code)) throw new InputRefused("兑换码格式不对：应为一串不含空格的字符（至多 128 个）");
  const site = await siteProfile(account, deps);
  // new-api counts redeems and key reveals of this service's address together: say so before spending one.
  const critical = site.family === "new-api" || site.family === "unknown";
  if (critical && !takeCritical(site.id)) {
    const { nextAt } = criticalLeft(site.id);
    throw new ActionRefused(`站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请${retryIn(nextAt)}再试`);
  }
  const record = (ok: boolean, message: string, quota: number | null) =>
    recordAction(db, actor, { kind: "redeem", ok, message, quota });
  const answer = await recordedSend(record, () => siteWrite(account, redeemRequest(code), deps));
  if (!answer.success) {
    const message = redeemRefusal(answer.message);
    await record(false, message, null);
    throw new ActionRefused(message);
  }
  forgetAccountReads(account);
  const quota = redeemedQuota(answer.data);
  const message =
    quota === null ? "兑换成功（站点没有说明增加的额度）" : `兑换成功，增加 ${formatMoney(quota, site.money)}`;
  await record(true, message, quota);
  return { quota: quota ?? 0, usd: usdOf(quota ?? 0, site.money), money: site.money, message };
}
