/** An audit entry as a sentence: who did what to which site, with what changed. */

type Entry = {
  action: string;
  actor: string;
  count: number;
  siteId: number | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

const text = (v: unknown) => (typeof v === "string" ? v : "");
const budget = (v: unknown) => (typeof v === "number" ? `每分钟 ${v} 次` : "默认");
const MODES: Record<string, string> = { open: "任何人可创建", invite: "凭邀请码创建" };

/** The site an entry is about, by the name it had (and its id). */
function siteOf(e: Entry, names: Map<number, string>): string {
  const name = text(e.after?.name) || text(e.before?.name) || (e.siteId !== null ? names.get(e.siteId) : "") || "";
  return name ? `站点「${name}」` : e.siteId !== null ? `站点 #${e.siteId}` : "站点";
}

/** What an edit changed, field by field. */
function changes(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (text(before.name) !== text(after.name)) out.push(`名称「${text(before.name)}」改为「${text(after.name)}」`);
  if (text(before.url) !== text(after.url)) out.push(`地址 ${text(before.url)} 改为 ${text(after.url)}`);
  if ((before.requestsPerMinute ?? null) !== (after.requestsPerMinute ?? null)) {
    out.push(`请求预算由${budget(before.requestsPerMinute)}改为${budget(after.requestsPerMinute)}`);
  }
  if (typeof after.endedSessions === "number") out.push(`结束了旧地址的 ${after.endedSessions} 个会话`);
  if (after.ledger === "kept") out.push("账本保留");
  if (after.ledger === "archived") out.push(`原账本 ${Number(after.archivedEntries ?? 0)} 条另行保存`);
  return out;
}

export function auditSentence(e: Entry, names: Map<number, string>): string {
  const who = `来自 ${e.actor} 的管理员`;
  switch (e.action) {
    case "signIn":
      return `${who}登录了站点管理`;
    case "signInFailed":
      return `${e.actor} 登录站点管理失败${e.count > 1 ? ` ${e.count} 次（十分钟内）` : ""}`;
    case "password":
      return `${who}设置了新的管理员密码`;
    case "siteAdd":
      return `${who}添加了${siteOf(e, names)}（${text(e.after?.url)}，${budget(e.after?.requestsPerMinute)}）`;
    case "siteEdit": {
      const list = e.before && e.after ? changes(e.before, e.after) : [];
      return `${who}修改了${siteOf({ ...e, after: null }, names)}${list.length ? `：${list.join("；")}` : "（没有改动）"}`;
    }
    case "siteRemove":
      return `${who}移除了${siteOf(e, names)}（${text(e.before?.url)}）`;
    case "siteBlock":
      return `${who}禁止了工作区添加站点地址 ${text(e.after?.url)}`;
    case "siteUnblock":
      return `${who}解除了对站点地址 ${text(e.before?.url)} 的禁止`;
    case "signupMode":
      return `${who}把工作区的创建方式设为「${MODES[text(e.after?.mode)] ?? text(e.after?.mode)}」`;
    case "inviteCreate":
      return `${who}生成了一个工作区邀请码${text(e.after?.note) ? `（备注：${text(e.after?.note)}）` : ""}`;
    default:
      return `${who}：${e.action}`;
  }
}
