import { z } from "zod";
import { successOf } from "../../core/messages";
import { closedRange, rangeShape } from "./range";

// 模型价格 (docs/design.md 22): inputs, and answers in the success envelope.

const success = <T extends z.ZodType>(data: T, name: string) => successOf(data).meta({ id: name });
const usd = z.number().nullable();

export const compareInput = z.object({
  model: z.string().trim().min(1, "请填写模型名称").max(200).describe("模型名称，如 gpt-4o-mini"),
});

const priceRowSchema = z
  .object({
    siteId: z.number().int(),
    siteName: z.string(),
    accountId: z.string().describe("账户：工作区中为保存的账户编号，浏览器中为账户的 key"),
    model: z.string(),
    group: z.string().nullable().describe("账户的分组"),
    groupRatio: z.number().nullable().describe("分组倍率；站点不告诉令牌时、或价格由日志推算时为 null"),
    inputPerMillionUsd: usd.describe("每百万输入 tokens（美元），已乘分组倍率"),
    outputPerMillionUsd: usd.describe("每百万输出 tokens（美元）"),
    perCallUsd: usd.describe("按次计费的模型每次（美元）"),
    derivedFromLogs: z.boolean().describe("站点不公开价格，由该账户近 7 天的消费日志推算（由日志推算）"),
    charged: z
      .object({
        factor: z.number().describe("实际计费 ÷ 按价目表（含分组倍率、缓存按日志）应计的费用，保留 4 位小数"),
        entries: z.number().int().describe("核对过的记录数"),
      })
      .nullable()
      .describe("核对：该账户近 30 天这个模型的消费记录与价目表对比；没有可与价目表核对的记录时为 null"),
    overList: z.boolean().describe("核对发现该账户这个模型的实际计费高于价目表"),
    effective: z
      .object({
        inputPerMillionUsd: usd,
        outputPerMillionUsd: usd,
        perCallUsd: usd,
        basis: z
          .enum(["charged", "list", "logs"])
          .describe("charged：价目表 × 核对得出的实际计费倍数；list：只有价目表（估计）；logs：由日志推算（估计）"),
      })
      .describe("该账户这个模型实际被计的价格：排名与“最便宜”按它"),
    usable: z.boolean().describe("该账户可以使用这个模型"),
    cheapest: z.boolean().describe("可用账户中实际计费最便宜的（按次，或每百万输入 + 输出；effective）"),
  })
  .meta({ id: "PriceRow" });

export const compareSuccess = success(
  z.object({ model: z.string(), rows: z.array(priceRowSchema) }),
  "PriceCompareSuccess",
);

export const cheapestInput = z
  .object({ model: compareInput.shape.model, ...rangeShape })
  .transform((q, ctx) => closedRange(q, ctx));

export const cheapestSuccess = success(
  z.object({
    model: z.string(),
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    usage: z
      .object({
        requests: z.number().int(),
        promptTokens: z.number().int(),
        completionTokens: z.number().int(),
        actualUsd: z.number().describe("实际花费"),
      })
      .nullable()
      .describe("范围内全部账户使用这个模型的用量；没有用过时为 null"),
    rows: z
      .array(
        priceRowSchema.extend({
          usageUsd: usd.describe(
            "范围内的同样用量在该账户实际计费下的花费（各账户的实际花费按两边 effective 价格之比换算，缓存随之计入）；无法计价或没有用量时为 null",
          ),
        }),
      )
      .describe("提供这个模型的账户：能用的在前，按实际计费从便宜到贵"),
    suggestions: z
      .array(z.string())
      .describe("没有账户提供这个名称的模型时：名称中含有它的已知模型（至多 20 个），如 claude → claude-sonnet-4"),
  }),
  "PriceCheapestSuccess",
);

export const whatIfInput = z
  .object({ ...rangeShape })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const whatIfSuccess = success(
  z.object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    rows: z.array(
      z.object({
        model: z.string(),
        requests: z.number().int(),
        promptTokens: z.number().int(),
        completionTokens: z.number().int(),
        actualUsd: z.number().describe("实际花费"),
        elsewhere: z
          .array(
            z.object({
              siteId: z.number().int(),
              siteName: z.string(),
              accountId: z.string(),
              usd: z.number().describe("同样的用量在该账户实际计费下的花费（实际花费按 effective 价格之比换算）"),
              derivedFromLogs: z.boolean(),
            }),
          )
          .describe("提供该模型的各账户，从便宜到贵"),
      }),
    ),
    totals: z.object({
      actualUsd: z.number(),
      cheapestUsd: z.number().describe("每个模型都用最便宜的账户时的花费"),
      savingUsd: z.number(),
    }),
  }),
  "PriceWhatIfSuccess",
);

export const tableSuccess = success(
  z.object({
    accounts: z.array(
      z.object({
        accountId: z.string(),
        siteId: z.number().int(),
        siteName: z.string(),
        name: z.string(),
        group: z.string().nullable(),
        error: z.string().nullable().describe("最近一次读取该账户的价格失败的原因"),
      }),
    ),
    models: z.array(
      z.object({
        model: z.string(),
        cells: z
          .array(priceRowSchema.omit({ siteId: true, siteName: true, model: true, group: true }).nullable())
          .describe("与 accounts 同序；账户既看不到也无价格时为 null"),
      }),
    ),
  }),
  "PriceTableSuccess",
);

export const historySuccess = success(
  z.object({
    model: z.string(),
    sites: z.array(
      z.object({
        siteId: z.number().int(),
        siteName: z.string(),
        points: z
          .array(
            z.object({
              at: z.iso.datetime().describe("读到这个价格（或价格变化）的时间"),
              inputPerMillionUsd: usd,
              outputPerMillionUsd: usd,
              perCallUsd: usd,
            }),
          )
          .describe("站点的标价（分组倍率 1）每次变化；全为 null 表示模型下架"),
      }),
    ),
  }),
  "PriceHistorySuccess",
);

const priceOnly = z
  .object({
    inputPerMillionUsd: usd,
    outputPerMillionUsd: usd,
    perCallUsd: usd,
    derivedFromLogs: z.boolean(),
  })
  .nullable();

export const accountViewSuccess = success(
  z.object({
    accountId: z.string(),
    siteName: z.string(),
    group: z.string().nullable(),
    groupRatio: z.number().nullable(),
    models: z.array(z.string()).describe("该账户可用的模型"),
    readAt: z.iso.datetime().nullable().describe("最近一次读取该账户的分组与模型的时间"),
    error: z.string().nullable(),
    used: z
      .array(
        z.object({
          model: z.string(),
          actualUsd: z.number().describe("范围内在本账户的实际花费"),
          own: priceOnly.describe("本账户的价格"),
          cheapest: z
            .object({
              siteName: z.string(),
              accountId: z.string(),
              price: priceOnly.unwrap(),
              usd: z.number().nullable().describe("同样的用量在那里的花费"),
            })
            .nullable()
            .describe("提供该模型的其他账户中最便宜的；没有时为 null"),
        }),
      )
      .describe("范围内用过的模型，花费从多到少"),
  }),
  "PriceAccountSuccess",
);
