/**
 * A month of realistic account history for the demo site and the tests: usage over several models
 * and tokens with a working-day rhythm, top-ups, the odd failed call; the same every run for a
 * given seed and end time.
 */
import { add, dec, mul, roundHalfAway } from "../shared/decimal";
import type { StandInLog, StandInSubscription, StandInToken, StandInTopup } from "./gateway";

const QUOTA_PER_USD = 500_000;

/** USD per million prompt / completion tokens, roughly what the models cost. */
/** The demo's models and their list prices (USD per 1M input and output tokens). */
export const MODELS = [
  { name: "gpt-4o-mini", input: 0.15, output: 0.6, weight: 34, ms: 2_200 },
  { name: "gpt-4o", input: 2.5, output: 10, weight: 14, ms: 4_800 },
  { name: "claude-sonnet-4", input: 3, output: 15, weight: 16, ms: 6_500 },
  { name: "deepseek-chat", input: 0.27, output: 1.1, weight: 18, ms: 5_200 },
  { name: "gemini-2.5-flash", input: 0.3, output: 2.5, weight: 12, ms: 1_900 },
  { name: "text-embedding-3-small", input: 0.02, output: 0, weight: 6, ms: 300 },
];

const TOKEN_NAMES = ["笔记本", "生产服务器", "手机", "CI 测试"];

/**
 * A call's cache, from its prompt alone (no draw of the history's random numbers): Claude reads
 * most of two prompts in three from the cache at 0.1 and writes a fifth of one in five at 1.25;
 * GPT-4o reads half of one prompt in three at 0.5 (OpenAI's discount).
 */
function cacheOf(model: string, prompt: number): NonNullable<StandInLog["cache"]> | undefined {
  if (model === "claude-sonnet-4") {
    const read = prompt % 3 !== 0 ? Math.floor((prompt * 0.7) / 10) * 10 : 0;
    const write = prompt % 5 === 1 ? Math.floor((prompt * 0.2) / 4) * 4 : 0;
    return read + write > 0 ? { read, readRatio: 0.1, write, writeRatio: 1.25, claude: true } : undefined;
  }
  if (model === "gpt-4o" && prompt % 3 === 0) {
    const read = Math.floor((prompt * 0.5) / 10) * 10;
    return read > 0 ? { read, readRatio: 0.5, write: 0, writeRatio: 1, claude: false } : undefined;
  }
  return undefined;
}

/** Share of a day's calls in each local hour (people work in the day, batch jobs run at night). */
const HOURLY = [1, 1, 0.6, 0.4, 0.4, 0.5, 1, 2, 4, 7, 9, 9, 6, 7, 9, 9, 8, 7, 5, 4, 4, 3, 2, 1.5];

/** mulberry32: a small seeded generator, so the demo's numbers are stable. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T extends { weight: number }>(items: T[], r: number): T {
  const total = items.reduce((s, i) => s + i.weight, 0);
  let x = r * total;
  for (const item of items) {
    x -= item.weight;
    if (x <= 0) return item;
  }
  return items[items.length - 1] as T;
}

function keyOf(rand: () => number): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length: 48 }, () => chars[Math.floor(rand() * chars.length)]).join("");
}

export type History = {
  logs: StandInLog[];
  tokens: StandInToken[];
  topups: StandInTopup[];
  /** What the site's user object says about the account after this history. */
  totals: { quota: number; usedQuota: number; requestCount: number };
  /** The balance every 3 hours of the history, as syncs would have noted it (oldest first). */
  balances: Array<{ at: number; quota: number }>;
  /** The plan bought (new-api's subscription), as the site keeps it now; null without one. */
  subscription: StandInSubscription | null;
};

export type HistoryOptions = {
  seed?: number;
  days?: number;
  /** Calls on an ordinary weekday; weekends see a third of it. */
  callsPerDay?: number;
  /** Unix seconds; the history ends here. */
  now?: number;
  /** Hours the site's clock is ahead of UTC (the rhythm follows local hours). */
  utcOffsetHours?: number;
  /** A deduction the log never shows (a site's billing slip), this many days before the end: 对账 finds it. */
  unlogged?: { daysAgo: number; usd: number };
  /**
   * A plan bought this many days before the end, lasting `days`, with `dailyUsd` a day reset at
   * local midnight (new-api's subscription, subscription first): the calls it can pay it pays, the
   * wallet the rest.
   */
  plan?: { id: number; planId: number; title: string; daysAgo: number; days: number; dailyUsd: number; price: number };
};

export function demoHistory(opts: HistoryOptions = {}): History {
  const rand = random(opts.seed ?? 7);
  const days = opts.days ?? 30;
  const perDay = opts.callsPerDay ?? 160;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const offset = (opts.utcOffsetHours ?? 8) * 3600;
  const start = now - days * 86_400;

  const tokens: StandInToken[] = TOKEN_NAMES.map((name, i) => ({
    id: 11 + i,
    name,
    key: keyOf(rand),
    status: i === 3 ? 2 : 1,
    createdTime: start - (40 - i * 7) * 86_400,
    accessedTime: 0,
    expiredTime: i === 2 ? now + 60 * 86_400 : -1,
    remainQuota: i === 0 ? 0 : [0, 40, 15, 5][i]! * QUOTA_PER_USD,
    unlimited: i === 0,
    usedQuota: 0,
    group: i === 1 ? "vip" : "",
  }));
  const tokenWeights = [{ weight: 40 }, { weight: 45 }, { weight: 12 }, { weight: 3 }];

  const logs: StandInLog[] = [];
  const topups: StandInTopup[] = [];
  let topupId = 40;
  let credited = 50 * QUOTA_PER_USD; // the opening balance, before this month

  /** A log entry that is not a call (a top-up, an administrator's change): no model, no tokens, no cost. */
  const note = (createdAt: number, type: number, content: string): StandInLog => ({
    createdAt,
    type,
    model: "",
    tokenName: "",
    tokenId: 0,
    quota: 0,
    promptTokens: 0,
    completionTokens: 0,
    durationMs: 0,
    stream: false,
    content,
  });

  const topup = (at: number, usd: number, method: string) => {
    topupId++;
    const paid = Math.round(usd * 7.3 * 100) / 100;
    topups.push({
      id: topupId,
      amount: usd,
      money: paid,
      tradeNo: `USR1NO${keyOf(rand).slice(0, 6)}${at}`,
      paymentMethod: method,
      createTime: at,
      completeTime: at + 40 + Math.floor(rand() * 60),
      status: "success",
    });
    credited += usd * QUOTA_PER_USD;
    // As new-api writes it: the amount only in the text (LogQuota), the entry's quota 0.
    logs.push(note(at + 60, 1, `使用在线充值成功，充值金额: ＄${usd.toFixed(6)} 额度，支付金额：${paid.toFixed(6)}`));
  };

  const plan = opts.plan
    ? {
        ...opts.plan,
        start: now - opts.plan.daysAgo * 86_400,
        end: now - opts.plan.daysAgo * 86_400 + opts.plan.days * 86_400,
        daily: Math.round(opts.plan.dailyUsd * QUOTA_PER_USD),
        used: 0,
        window: 0,
      }
    : null;
  if (plan) {
    logs.push(
      note(plan.start, 1, `订阅购买成功，套餐: ${plan.title}，支付金额: ${plan.price.toFixed(2)}，支付方式: alipay`),
    );
  }

  for (let d = 0; d <= days; d++) {
    const dayStart = Math.floor((start + offset) / 86_400) * 86_400 - offset + d * 86_400;
    const weekday = new Date((dayStart + offset) * 1000).getUTCDay();
    const dayCalls = perDay * (weekday === 0 || weekday === 6 ? 0.35 : 1) * (0.8 + rand() * 0.4);
    const hourSum = HOURLY.reduce((a, b) => a + b, 0);
    for (let h = 0; h < 24; h++) {
      const calls = Math.round((dayCalls * (HOURLY[h] ?? 0)) / hourSum + (rand() - 0.5));
      for (let c = 0; c < calls; c++) {
        const at = dayStart + h * 3600 + Math.floor(rand() * 3600);
        if (at < start || at > now) continue;
        const model = pick(MODELS, rand());
        const tokenIndex = TOKEN_NAMES.indexOf(TOKEN_NAMES[tokenWeights.indexOf(pick(tokenWeights, rand()))] ?? "");
        const token = tokens[tokenIndex] ?? tokens[0]!;
        if (rand() < 0.012) {
          logs.push({
            createdAt: at,
            type: 5,
            model: model.name,
            tokenName: token.name,
            tokenId: token.id,
            quota: 0,
            promptTokens: 0,
            completionTokens: 0,
            durationMs: 30_000,
            stream: false,
            content: "上游返回错误: 429 Too Many Requests（已重试 3 次）",
          });
          continue;
        }
        const prompt = Math.round(200 + rand() ** 2 * 12_000);
        const completion = model.output === 0 ? 0 : Math.round(40 + rand() ** 2 * 1_800);
        const modelRatio = model.input / 2;
        const completionRatio = model.output === 0 ? 1 : model.output / model.input;
        const cache = cacheOf(model.name, prompt);
        // Charged as new-api charges it: exact decimals of the ratios it logs, rounded once; the
        // cache's tokens at their own ratios (multiples of 10 and 4, so one-hub's truncation agrees).
        const input = cache
          ? add(
              dec(prompt - cache.read - cache.write),
              add(mul(dec(cache.read), dec(cache.readRatio)), mul(dec(cache.write), dec(cache.writeRatio))),
            )
          : dec(prompt);
        const charge = mul(add(input, mul(dec(completion), dec(completionRatio))), dec(modelRatio));
        const quota = Math.max(1, roundHalfAway(charge));
        // The plan pays while its day's quota lasts (its window resets at local midnight).
        let paidBy: StandInLog["subscription"];
        if (plan && at >= plan.start && at < plan.end) {
          if (plan.window !== dayStart) Object.assign(plan, { window: dayStart, used: 0 });
          if (plan.used + quota <= plan.daily) {
            plan.used += quota;
            paidBy = { id: plan.id, planId: plan.planId, title: plan.title, total: plan.daily, used: plan.used };
          }
        }
        logs.push({
          createdAt: at,
          type: 2,
          model: model.name,
          tokenName: token.name,
          tokenId: token.id,
          quota,
          promptTokens: prompt,
          completionTokens: completion,
          durationMs: Math.round(model.ms * (0.4 + rand() * 1.4)),
          stream: model.output > 0 && rand() < 0.7,
          content: `模型倍率 ${modelRatio.toFixed(2)}，补全倍率 ${completionRatio.toFixed(2)}，分组倍率 1.00`,
          ratios: { model: modelRatio, completion: completionRatio },
          ...(cache ? { cache } : {}),
          ...(paidBy ? { subscription: paidBy } : {}),
        });
        token.usedQuota += quota;
        token.accessedTime = Math.max(token.accessedTime, at);
      }
    }
    if (d % 8 === 3)
      topup(
        dayStart + 10 * 3600 + Math.floor(rand() * 3600),
        [20, 50, 10, 30][(d / 8) | 0] ?? 20,
        d % 16 === 3 ? "alipay" : "wxpay",
      );
  }
  logs.push(note(start + 2 * 86_400 + 3600, 3, "管理员将用户分组从 default 修改为 vip"));
  logs.sort((a, b) => a.createdAt - b.createdAt);
  const usedQuota = logs.reduce((s, l) => s + (l.type === 2 ? l.quota : 0), 0);
  // What the wallet paid: the plan's calls are counted as used but not taken from the balance.
  const walletPaid = (l: StandInLog) => (l.type === 2 && !l.subscription ? l.quota : 0);
  const slip = opts.unlogged
    ? { at: now - opts.unlogged.daysAgo * 86_400, quota: Math.round(opts.unlogged.usd * QUOTA_PER_USD) }
    : null;
  // The balance every 3 hours: the opening balance, the top-ups completed and the calls made by then.
  const balances: Array<{ at: number; quota: number }> = [];
  let balance = credited - topups.reduce((s, t) => s + t.amount * QUOTA_PER_USD, 0);
  let l = 0;
  let t = 0;
  // A top-up counts from its log entry (a minute after it was made), as 对账 reads it.
  const byTime = topups.map((x) => ({ at: x.createTime + 60, amount: x.amount })).sort((a, b) => a.at - b.at);
  for (let at = start + 3 * 3600; at < now; at += 3 * 3600) {
    for (; l < logs.length && logs[l]!.createdAt <= at; l++) balance -= walletPaid(logs[l]!);
    for (; t < byTime.length && byTime[t]!.at <= at; t++) balance += byTime[t]!.amount * QUOTA_PER_USD;
    balances.push({ at, quota: balance - (slip && slip.at <= at ? slip.quota : 0) });
  }
  return {
    logs,
    tokens,
    topups,
    balances,
    totals: {
      quota: credited - logs.reduce((sum, x) => sum + walletPaid(x), 0) - (slip?.quota ?? 0),
      usedQuota,
      requestCount: logs.filter((l) => l.type === 2).length,
    },
    subscription: plan
      ? {
          id: plan.id,
          planId: plan.planId,
          total: plan.daily,
          // Today's window: what the plan paid since local midnight.
          used: plan.window === Math.floor((now + offset) / 86_400) * 86_400 - offset ? plan.used : 0,
          start: plan.start,
          end: plan.end,
          lastReset: Math.floor((now + offset) / 86_400) * 86_400 - offset,
          nextReset: Math.floor((now + offset) / 86_400) * 86_400 - offset + 86_400,
          source: "order",
        }
      : null,
  };
}

/**
 * A demo site's price list in its family's shape at its quota units (500,000 a dollar), each model
 * at `factor` × its list price (sites differ), and the group ratios.
 */
export function demoPricing(
  family: "new-api" | "one-hub",
  factor: Record<string, number> = {},
): { data: Array<Record<string, unknown>>; groupRatios: Record<string, number> } {
  const at = (m: (typeof MODELS)[number]) => factor[m.name] ?? 1;
  if (family === "one-hub") {
    return {
      data: MODELS.map((m) => ({
        model: m.name,
        type: "tokens",
        channel_type: 1,
        input: (m.input * at(m)) / 2,
        output: (m.output * at(m)) / 2,
        locked: false,
      })),
      groupRatios: { default: 1 },
    };
  }
  return {
    data: [
      ...MODELS.map((m) => ({
        model_name: m.name,
        quota_type: 0,
        model_ratio: (m.input * at(m)) / 2,
        completion_ratio: m.input === 0 ? 1 : m.output / m.input,
        enable_groups: ["default", "vip"],
      })),
      {
        model_name: "dall-e-3",
        quota_type: 1,
        model_ratio: 0,
        model_price: 0.04,
        completion_ratio: 0,
        enable_groups: ["vip"],
      },
    ],
    groupRatios: { default: 1, vip: 1 },
  };
}
