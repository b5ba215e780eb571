/**
 * Managing an account's API keys on its site (gateway-actions.md §2.2–§6): create, edit,
 * enable/disable, delete, and the full key on explicit request only. Each is checked to the
 * family's own rules before anything is sent, recorded in 操作记录 without the key, and forgets
 * the account's kept token pages (nothing else changed). The full key is never stored, cached or
 * logged here: it goes from the site's answer to the caller's.
 */
import type { Db } from "../db/client";
import {
  batchDeleteRequest,
  createTokenRequest,
  createdId,
  deleteTokenRequest,
  draftOf,
  draftProblem,
  fullKey,
  isKeyShaped,
  revealRequest,
  tokenRequest,
  tokenRules,
  tokenRefusal,
  tokenStatusRequest,
  updateTokenRequest,
  type TokenDraft,
  type TokenRules,
} from "../gateway/token-writes";
import { isRow } from "../gateway/reads";
import {
  forgetAccountReads,
  siteProfile,
  siteRead,
  siteWrite,
  SiteDataError,
  unexpected,
  type Account,
  type SiteDataDeps,
} from "../site-data/calls";
import { tokens } from "../site-data/site-data";
import { clientConfigs } from "./client-config";
import { CRITICAL_LIMIT, criticalLeft, retryIn, takeCritical } from "./critical";
import { recordAction, recordedSend, type Actor } from "./records";
import { ActionRefused, InputRefused } from "./redeem";
import type { RevealedKey, TokenRulesAnswer } from "./schemas";

/** new-api (and a site whose family is not known, answered as new-api) counts key reveals in its critical budget. */
const countsCritical = (rules: TokenRules) => rules.revealRoute;

/** The family's rules for a token form, and what is left of the site's critical budget. */
export async function tokenRulesOf(account: Account, deps: SiteDataDeps): Promise<TokenRulesAnswer> {
  const site = await siteProfile(account, deps);
  const rules = tokenRules(site.family, site.money.quotaPerUnit);
  const { left, nextAt } = criticalLeft(site.id);
  return {
    ...rules,
    money: site.money,
    critical: countsCritical(rules)
      ? { limit: CRITICAL_LIMIT.calls, left, nextAt: nextAt === null ? null : new Date(nextAt).toISOString() }
      : null,
  };
}

type Recorder = (ok: boolean, message: string) => Promise<void>;

function recorder(db: Db, actor: Actor): Recorder {
  return (ok, message) => recordAction(db, actor, { kind: "token", ok, message, quota: null });
}

/** Sends one token write; a refusal is recorded and answered in the site's words. */
async function send(
  record: Recorder,
  what: string,
  account: Account,
  request: Parameters<typeof siteWrite>[1],
  deps: SiteDataDeps,
) {
  const answer = await recordedSend(
    (ok, message) => record(ok, `${what}：${message}`),
    () => siteWrite(account, request, deps),
  );
  if (!answer.success) {
    const message = tokenRefusal(answer.message);
    await record(false, `${what}：${message}`);
    throw new ActionRefused(message);
  }
  return answer;
}

/** The token as the site has it now (never a kept copy: an edit is built from it). */
async function storedToken(account: Account, id: number, deps: SiteDataDeps): Promise<Record<string, unknown>> {
  let data: unknown;
  try {
    data = await siteRead(account, tokenRequest(id), deps);
  } catch (error) {
    // The site's "record not found" for a token that is not (or no longer) the account's.
    if (error instanceof SiteDataError && error.kind === "unreachable" && /record not found/i.test(error.message)) {
      throw new ActionRefused(tokenRefusal("record not found"));
    }
    throw error;
  }
  if (!isRow(data)) throw unexpected();
  return data;
}

export async function createToken(
  db: Db,
  account: Account,
  actor: Actor,
  draft: TokenDraft,
  deps: SiteDataDeps,
): Promise<{ id: number | null; message: string }> {
  const site = await siteProfile(account, deps);
  const problem = draftProblem(draft, tokenRules(site.family, site.money.quotaPerUnit));
  if (problem) throw new InputRefused(problem);
  const name = draft.name.trim();
  const answer = await send(
    recorder(db, actor),
    `创建令牌「${name}」`,
    account,
    createTokenRequest(site.family, draft),
    deps,
  );
  forgetAccountReads(account, "tokens");
  await recorder(db, actor)(true, `创建令牌「${name}」：成功`);
  // new-api, Veloera and one-hub answer without the token: it is the newest of that name.
  let id = createdId(answer.data);
  if (id === null) {
    const page = await tokens(account, { page: 1, pageSize: 10 }, { ...deps, refresh: true });
    id = page.items.find((t) => t.name === name)?.id ?? null;
  }
  return {
    id,
    message: id === null ? "令牌已创建，但站点没有告诉它在列表中的位置，请刷新列表查看" : "令牌已创建",
  };
}

/** An edit: the token read from the site, the changed fields over it, every field sent back. */
export async function updateToken(
  db: Db,
  account: Account,
  actor: Actor,
  id: number,
  patch: Partial<TokenDraft>,
  deps: SiteDataDeps,
): Promise<{ message: string }> {
  const site = await siteProfile(account, deps);
  const stored = await storedToken(account, id, deps);
  const now = draftOf(stored);
  const draft = { ...now, ...patch };
  // A past expiry the edit does not touch stays as it is (renaming an expired key is allowed).
  const problem = draftProblem(
    patch.expiresAt === undefined ? { ...draft, expiresAt: null } : draft,
    tokenRules(site.family, site.money.quotaPerUnit),
  );
  if (problem) throw new InputRefused(problem);
  const name = draft.name.trim();
  await send(recorder(db, actor), `修改令牌「${name}」`, account, updateTokenRequest(site.family, stored, draft), deps);
  forgetAccountReads(account, "tokens");
  await recorder(db, actor)(true, `修改令牌「${name}」：成功`);
  return { message: "令牌已保存" };
}

export async function setTokenStatus(
  db: Db,
  account: Account,
  actor: Actor,
  id: number,
  enabled: boolean,
  deps: SiteDataDeps,
): Promise<{ message: string }> {
  const what = `${enabled ? "启用" : "禁用"}令牌 #${id}`;
  await send(recorder(db, actor), what, account, tokenStatusRequest(id, enabled), deps);
  forgetAccountReads(account, "tokens");
  await recorder(db, actor)(true, `${what}：成功`);
  return { message: enabled ? "令牌已启用" : "令牌已禁用" };
}

/** Deletes the tokens: new-api in one call, the others one by one (what failed is said per token). */
export async function deleteTokens(
  db: Db,
  account: Account,
  actor: Actor,
  ids: number[],
  deps: SiteDataDeps,
): Promise<{ deleted: number; failed: Array<{ id: number; message: string }>; permanent: boolean }> {
  const site = await siteProfile(account, deps);
  const rules = tokenRules(site.family, site.money.quotaPerUnit);
  const record = recorder(db, actor);
  const unique = [...new Set(ids)];
  const failed: Array<{ id: number; message: string }> = [];
  let deleted = 0;
  try {
    if (rules.batchDelete && unique.length > 1) {
      const what = `删除 ${unique.length} 个令牌（#${unique.join("、#")}）`;
      const answer = await send(record, what, account, batchDeleteRequest(unique), deps);
      deleted = typeof answer.data === "number" ? answer.data : unique.length;
      await record(true, `${what}：删除了 ${deleted} 个`);
    } else {
      for (const id of unique) {
        const what = `删除令牌 #${id}`;
        try {
          await send(record, what, account, deleteTokenRequest(id), deps);
          await record(true, `${what}：成功${rules.hardDelete ? "（站点永久删除）" : ""}`);
          deleted++;
        } catch (error) {
          if (!(error instanceof ActionRefused)) throw error;
          failed.push({ id, message: error.message });
        }
      }
    }
  } finally {
    forgetAccountReads(account, "tokens");
  }
  return { deleted, failed, permanent: rules.hardDelete };
}

/**
 * The full key, on explicit request: read from the token (the families that list full keys) or
 * revealed by current new-api from its critical budget, which is counted and said before it is
 * spent. Recorded as seen, never with the key.
 */
export async function revealToken(
  db: Db,
  account: Account,
  actor: Actor,
  id: number,
  deps: SiteDataDeps,
): Promise<RevealedKey> {
  const site = await siteProfile(account, deps);
  const rules = tokenRules(site.family, site.money.quotaPerUnit);
  const stored = await storedToken(account, id, deps);
  const name = typeof stored.name === "string" ? stored.name : `#${id}`;
  const what = `查看令牌「${name}」的密钥`;
  // Builds before current new-api's masking list the key in full: no critical call spent.
  let key = fullKey(stored);
  if (key === null && rules.revealRoute) {
    if (!takeCritical(site.id)) {
      const { nextAt } = criticalLeft(site.id);
      throw new ActionRefused(`站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请${retryIn(nextAt)}再试`);
    }
    const answer = await send(recorder(db, actor), what, account, revealRequest(id), deps);
    key = fullKey(answer.data);
  }
  if (key === null) {
    await recorder(db, actor)(false, `${what}：站点没有给出完整密钥`);
    throw new ActionRefused("站点没有给出完整密钥");
  }
  if (!isKeyShaped(key)) {
    await recorder(db, actor)(false, `${what}：站点给出的密钥含有密钥以外的字符，已拒绝`);
    throw new ActionRefused("站点给出的密钥含有密钥以外的字符（如换行、引号或空格），已拒绝");
  }
  await recorder(db, actor)(true, `${what}：成功`);
  const draft = draftOf(stored);
  return {
    id,
    name,
    key,
    baseUrl: site.url,
    exports: clientConfigs({ siteName: site.name, baseUrl: site.url, key, model: draft.models[0] ?? null }),
  };
}
