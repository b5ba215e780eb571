/**
 * A site's own message, which may carry English words (`access token 无效`, `New-Api-User`),
 * shown with what they mean beside it, in words a person can act on. The site's text is kept as
 * it came: it is what its own pages and its support would quote.
 */
const MEANINGS: Array<[RegExp, string]> = [
  [/New-Api-User|Veloera-User/, "站点要求请求附带令牌所属账户的用户ID：请核对用户ID是否就是生成这个访问令牌的账户的ID"],
  [
    /access[ _-]?token/i,
    "access token 即站点的系统访问令牌：它可能填错、已被重置或失效，请在站点的个人设置中重新生成后再试",
  ],
  [/rate limit|too many requests/i, "站点限制了请求频率，请稍后再试"],
  [/unauthori[sz]ed|forbidden|permission denied/i, "站点拒绝了这个请求：账户没有这项权限"],
  [/quota/i, "quota 即站点的额度"],
  [/time(d)?[ -]?out/i, "站点没有及时答复"],
];

/** The message, with the meaning of the first English term it carries in brackets after it. */
export function siteWords(message: string): string {
  const meaning = MEANINGS.find(([words]) => words.test(message))?.[1];
  return meaning ? `${message}（${meaning}）` : message;
}
