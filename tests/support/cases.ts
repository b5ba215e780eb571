import { ALICE, BANNED, BOB, FAULT } from "./gateway";

/** Site ids the cases refer to; each suite registers these sites in its own store. */
export type Sites = { strict: number; legacy: number; unreachable: number };

export type LoginCase = {
  name: string;
  body: (sites: Sites) => unknown;
  message: string;
  /** The site must not have been asked (the check stops before step 3). */
  siteNotCalled?: boolean;
};

const INCOMPLETE = "请填写完整信息";
const NO_SITE = "站点不存在";

/** Every failure row of the contract's error table, in processing order, as (body → message). */
export const loginFailureCases: LoginCase[] = [
  { name: "a JSON array body", body: () => [1, 2], message: "请求体必须是 JSON 对象", siteNotCalled: true },
  { name: "a JSON string body", body: () => "hello", message: "请求体必须是 JSON 对象", siteNotCalled: true },
  { name: "a JSON null body", body: () => null, message: "请求体必须是 JSON 对象", siteNotCalled: true },
  { name: "an empty object", body: () => ({}), message: INCOMPLETE, siteNotCalled: true },
  ...(
    [
      ["userId 0", { userId: 0 }],
      ["userId empty string", { userId: "" }],
      ["userId null", { userId: null }],
      ["userId false", { userId: false }],
      ["userId an object", { userId: { id: 101 } }],
      ["userId an array", { userId: [101] }],
      ["accessToken empty", { accessToken: "" }],
      ["accessToken a number", { accessToken: 12345 }],
      ["accessToken null", { accessToken: null }],
      ["siteId 0", { siteId: 0 }],
      ["siteId empty string", { siteId: "" }],
      ["siteId false", { siteId: false }],
      ["siteId true", { siteId: true }],
    ] as const
  ).map(([name, patch]): LoginCase => ({
    name: `${name} counts as missing`,
    body: (s) => ({ userId: ALICE.id, accessToken: ALICE.token, siteId: s.strict, ...patch }),
    message: INCOMPLETE,
    siteNotCalled: true,
  })),
  {
    name: "a missing field is reported before an unknown site",
    body: () => ({ userId: ALICE.id, siteId: 9999 }),
    message: INCOMPLETE,
    siteNotCalled: true,
  },
  ...(
    [
      ["an unknown numeric siteId", 9999],
      ["a non-numeric siteId", "abc"],
      ["a negative siteId", -1],
      ["a fractional siteId", 1.5],
      ['the siteId "0"', "0"],
      ["a huge siteId", 1e20],
    ] as const
  ).map(([name, siteId]): LoginCase => ({
    name: `${name} answers 站点不存在`,
    body: () => ({ userId: ALICE.id, accessToken: "whatever", siteId }),
    message: NO_SITE,
    siteNotCalled: true,
  })),
  {
    name: "an invalid token on an older site (HTTP 200 failure) passes the site's message through",
    body: (s) => ({ userId: ALICE.id, accessToken: "sk-wrong", siteId: s.legacy }),
    message: "无权进行此操作，access token 无效",
  },
  {
    name: "an invalid token on current new-api (HTTP 401 failure) passes the site's message through",
    body: (s) => ({ userId: ALICE.id, accessToken: "sk-wrong", siteId: s.strict }),
    message: "无权进行此操作，access token 无效",
  },
  {
    name: "a blank token reaches the site as no token, and the site's message stays intact",
    body: (s) => ({ userId: ALICE.id, accessToken: " ", siteId: s.legacy }),
    message: "无权进行此操作，未登录且未提供 access token",
  },
  {
    name: "a site message that echoes the token has it masked",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.echo, siteId: s.legacy }),
    message: "无权进行此操作，令牌 *** 无效",
  },
  {
    name: "a banned user gets the site's message",
    body: (s) => ({ userId: BANNED.id, accessToken: BANNED.token, siteId: s.legacy }),
    message: "用户已被封禁",
  },
  {
    name: "a site failure without a message gets the default message",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.noMessage, siteId: s.legacy }),
    message: "认证失败，请检查用户ID和令牌",
  },
  {
    name: "a site database error (HTTP 500 JSON) passes the site's message through",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.dbError, siteId: s.legacy }),
    message: "数据库出错，请联系管理员",
  },
  {
    name: "a site that checks New-Api-User refuses another user's id with its own message",
    body: (s) => ({ userId: BOB.id, accessToken: ALICE.token, siteId: s.strict }),
    message: "无权进行此操作，New-Api-User 与登录用户不匹配",
  },
  {
    name: "another user's id answers 用户ID与令牌不匹配",
    body: (s) => ({ userId: BOB.id, accessToken: ALICE.token, siteId: s.legacy }),
    message: "用户ID与令牌不匹配",
  },
  {
    name: "a non-numeric userId answers 用户ID与令牌不匹配",
    body: (s) => ({ userId: "alice", accessToken: ALICE.token, siteId: s.legacy }),
    message: "用户ID与令牌不匹配",
  },
  {
    name: "user data that is not an object answers 用户ID与令牌不匹配",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.stringData, siteId: s.legacy }),
    message: "用户ID与令牌不匹配",
  },
  {
    name: "an unreachable site",
    body: (s) => ({ userId: ALICE.id, accessToken: ALICE.token, siteId: s.unreachable }),
    message: "无法连接站点: 连接被拒绝",
  },
  {
    name: "an HTML answer",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.html, siteId: s.legacy }),
    message: "无法连接站点: 站点返回的不是 JSON（HTTP 200）",
  },
  {
    name: "a success without data",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.noData, siteId: s.legacy }),
    message: "无法连接站点: 站点响应缺少用户信息",
  },
  {
    name: "a JSON null answer",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.nullJson, siteId: s.legacy }),
    message: "无法连接站点: 站点返回了空的 JSON",
  },
  {
    name: "a site that never answers times out",
    body: (s) => ({ userId: ALICE.id, accessToken: FAULT.hang, siteId: s.legacy }),
    message: "无法连接站点: 连接超时",
  },
  {
    name: "a token that cannot be sent as a header",
    body: (s) => ({ userId: ALICE.id, accessToken: "sk-line\nbreak", siteId: s.legacy }),
    message: "无法连接站点: 请求头包含非法字符",
  },
];

/** Bodies that must sign in, and the user they sign in. */
export const loginSuccessCases: { name: string; body: (s: Sites) => unknown; userId: number | string }[] = [
  {
    name: "numbers, on a site that requires New-Api-User",
    body: (s) => ({ userId: ALICE.id, accessToken: ALICE.token, siteId: s.strict }),
    userId: ALICE.id,
  },
  {
    name: "numeric strings, on an older site",
    body: (s) => ({ userId: String(ALICE.id), accessToken: ALICE.token, siteId: String(s.legacy) }),
    userId: String(ALICE.id),
  },
  {
    name: "a token with the Bearer scheme, sent verbatim",
    body: (s) => ({ userId: BOB.id, accessToken: `Bearer ${BOB.token}`, siteId: s.strict }),
    userId: BOB.id,
  },
];
