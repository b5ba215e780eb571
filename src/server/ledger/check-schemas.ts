import { z } from "zod";

/** What 核对 answers (docs/design.md 27): the procedures' outputs and the OpenAPI document's source. */

const verdictSums = {
  entries: z.number().int().describe("范围内已核对的消费日志条数"),
  chargedUsd: z.number().describe("实际扣费（美元）"),
  checked: z.number().int().describe("能按日志自身倍率复算的条数"),
  checkedChargedUsd: z.number().describe("能复算的条目的实际扣费（美元）"),
  expectedUsd: z.number().describe("这些条目按日志自身倍率应扣（美元）"),
  differs: z.number().int().describe("实际扣费与日志倍率算出的不符的条数"),
  listChecked: z.number().int().describe("能与站点价目表比对的条数"),
  listChargedUsd: z.number().describe("能与价目表比对的条目的实际扣费（美元）"),
  listExpectedUsd: z.number().describe("这些条目按站点公开价目表（该分组、当时的价格）应扣（美元）"),
  listDiffers: z.number().int().describe("计费倍率与价目表不符的条数"),
  overUsd: z.number().describe("多扣的金额（美元）：实际扣费减去两种应扣中较低者，只计不符的条目；为负表示少扣"),
};

const checkRowSchema = z.object({
  key: z.string().describe("账户标识（不是令牌）"),
  site: z.string().describe("站点名"),
  account: z.string().describe("账户的称呼：别名，或站点用户名"),
  model: z.string(),
  ...verdictSums,
});

const flaggedEntrySchema = z.object({
  key: z.string().describe("账户标识（不是令牌）"),
  site: z.string(),
  account: z.string(),
  at: z.iso.datetime(),
  model: z.string(),
  tokenName: z.string(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  quota: z.number().describe("实际扣费（站点额度单位）"),
  chargedUsd: z.number(),
  expected: z.number().nullable().describe("按日志自身倍率应扣（额度单位）；与实际相符或无法复算时为 null"),
  expectedUsd: z.number().nullable(),
  listExpected: z.number().nullable().describe("按价目表应扣（额度单位）；与价目表相符或无法比对时为 null"),
  listExpectedUsd: z.number().nullable(),
  overUsd: z.number().describe("多扣（美元），为负表示少扣"),
  note: z.string().describe("与价目表的差别（计费价格与价目表价格）"),
  detail: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("日志附带的倍率等字段"),
});
export type FlaggedEntry = z.infer<typeof flaggedEntrySchema>;

export const chargeCheckSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    totals: z.object(verdictSums),
    rows: z.array(checkRowSchema).describe("按账户与模型，不符多的在前"),
    worst: z.array(flaggedEntrySchema).describe("多扣最多的条目（至多 10 条）"),
    pending: z.boolean().describe("是否还有新同步的日志尚未核对（核对在后台进行，通常一分钟内完成）"),
  })
  .meta({ id: "ChargeCheck" });
export type ChargeCheckReport = z.infer<typeof chargeCheckSchema>;
export type VerdictSums = z.infer<z.ZodObject<typeof verdictSums>>;

const cacheSums = {
  inputTokens: z.number().int().describe("输入 tokens（含缓存读取与写入）"),
  cacheRead: z.number().int().describe("从缓存读取的 tokens"),
  cacheWrite: z.number().int().describe("写入缓存的 tokens"),
  hitRate: z.number().nullable().describe("命中率：缓存读取 ÷ 输入 tokens；没有输入时为 null"),
  savedUsd: z.number().describe("缓存读取按其倍率计费比按完整输入价省下的（美元，按日志记录的倍率）"),
  costUsd: z.number().describe("缓存写入按其倍率计费比按完整输入价多花的（美元）"),
};

export const usageCacheSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    groupBy: z.enum(["day", "model", "token", "account"]),
    rows: z
      .array(z.object({ key: z.string().describe("日期、模型名、令牌名或账户的称呼"), ...cacheSums }))
      .describe("day 时为范围内每一天（按 UTC 整点归入 tz 的日期），其余按缓存读取从多到少"),
    totals: z.object(cacheSums),
    pending: z.boolean().describe("是否还有新同步的日志尚未计入（后台一分钟内完成）"),
  })
  .meta({ id: "UsageCache" });
export type UsageCache = z.infer<typeof usageCacheSchema>;

const incomeSums = {
  topupsUsd: z.number().describe("充值（美元）：在线充值等；日志只在文字里写金额的按文字，未写的按站点的充值记录"),
  redeemedUsd: z.number().describe("兑换码充值（美元）"),
  rewardsUsd: z
    .number()
    .describe("签到与赠送、返利等奖励（美元）；站点日志没有记录的签到按本服务的签到记录，不重复计算"),
  refundsUsd: z.number().describe("退款与补偿（美元）"),
  incomeUsd: z.number().describe("收入合计（美元）"),
  spendUsd: z.number().describe("消费（美元），含套餐支付的"),
  planSpendUsd: z.number().describe("其中由套餐支付、钱包未扣费的（美元；new-api 的套餐）"),
  plansBoughtUsd: z.number().describe("用余额购买套餐扣除的（美元）"),
  netUsd: z.number().describe("钱包的净变化：收入减钱包支付的消费、减用余额购买的套餐（美元）"),
};

export const usageIncomeSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    rows: z.array(z.object({ day: z.string(), ...incomeSums })).describe("范围内每一天（tz 时区）"),
    totals: z.object(incomeSums),
    accounts: z
      .array(
        z.object({
          siteId: z.number().int(),
          userId: z.number().int().describe("站点上的用户 ID"),
          incomeUsd: z.number().describe("该账户范围内的收入合计（美元）"),
        }),
      )
      .describe("每个账户范围内的收入"),
  })
  .meta({ id: "UsageIncome" });
export type UsageIncome = z.infer<typeof usageIncomeSchema>;

export const usageSpeedSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    rows: z
      .array(
        z.object({
          site: z.object({ id: z.number().int(), name: z.string() }),
          model: z.string(),
          requests: z.number().int().describe("范围内的消费请求数（与用量分析的请求数相同）"),
          timedRequests: z
            .number()
            .int()
            .describe("其中记录了总用时的请求数（new-api 以整秒记录，不到 1 秒的请求没有总用时）"),
          totalP50Ms: z.number().nullable().describe("总用时中位数（毫秒）"),
          totalP90Ms: z.number().nullable().describe("总用时 90 分位（毫秒）"),
          firstTokenRequests: z.number().int().describe("其中记录了首字用时的请求数（多为流式请求）"),
          firstTokenP50Ms: z.number().nullable().describe("首字用时中位数（毫秒）；日志没有记录时为 null"),
          firstTokenP90Ms: z.number().nullable().describe("首字用时 90 分位（毫秒）"),
          fastest: z.boolean().describe("同一模型的各站点中总用时中位数最短的（至少两个站点时）"),
        }),
      )
      .describe("按模型、再按总用时中位数从快到慢"),
  })
  .meta({ id: "UsageSpeed" });
export type UsageSpeed = z.infer<typeof usageSpeedSchema>;
