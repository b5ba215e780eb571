/** The OpenAPI paths of 模型价格 (docs/design.md 22): a model across the caller's accounts, and 如果在别处. */
import {
  ACCOUNT_PARAM,
  INTERNAL,
  SESSION_SECURITY,
  UNAUTHORIZED,
  UNAVAILABLE,
  failureExample,
  fileRoute,
  json,
  ref,
} from "./common";

const READ =
  "账户：工作区的全部账户，或本浏览器登录的全部账户。一小时内读过的站点价格表、一天内读过的账户可用模型直接使用（账户分组随每次账本同步更新），否则先向站点读取（受站点请求预算限制）。";

function get(operationId: string, summary: string, description: string, answer: string, parameters: object[] = []) {
  return {
    get: {
      operationId,
      summary,
      description: `${description}${READ}`,
      security: SESSION_SECURITY,
      parameters,
      responses: {
        "200": {
          description: "成功；参数无效时 success:false",
          content: json(
            { oneOf: [ref(answer), ref("Failure")] },
            { badParam: failureExample("请填写模型名称（参数 model）") },
          ),
        },
        "401": UNAUTHORIZED,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

export function pricePaths(): Record<string, object> {
  return {
    "/api/prices": get(
      "pricesTable",
      "模型价格表",
      "调用者各账户能看到或有价格的全部模型（站点公开的、账户可用的、由日志推算的），每个模型按 accounts 的顺序给出各账户的价格（同 /api/prices/compare 的一行，" +
        "账户既看不到也无价格时为 null），每个模型在可用账户中最便宜的一格 cheapest 为 true。accounts[].error 为最近一次读取失败的原因。",
      "PriceTableSuccess",
    ),
    "/api/prices/compare": get(
      "pricesCompare",
      "模型在各账户的价格",
      "一个模型在每个能看到它的账户上的价格（美元，每百万输入 / 输出 tokens，或按次），已乘该账户所在分组的倍率：" +
        "new-api / Veloera 由 /api/pricing 的倍率换算（model_ratio × 1e6 ÷ quota_per_unit，输出再乘 completion_ratio；按次为 model_price），" +
        "one-hub / done-hub 由 /api/prices 换算（input × 1e6 ÷ quota_per_unit；按次为 1000 × input ÷ quota_per_unit），" +
        "one-api 不向用户公开价格，由该账户近 7 天的消费日志以最小二乘拟合（额度 ≈ a × 输入 + b × 输出），derivedFromLogs 为 true。" +
        "站点不向令牌说出分组倍率时，同样按日志推算。usable：账户可用该模型；cheapest：可用账户中最便宜的。",
      "PriceCompareSuccess",
    ),
    "/api/prices/account": get(
      "pricesAccount",
      "当前账户的价格",
      "当前账户（工作区用 ?account=<id>）的分组、分组倍率与可用模型，以及范围内（默认最近 30 天）用过的每个模型：本账户的价格、提供该模型的其他账户中最便宜的一个，" +
        "和同样用量在那里的花费。",
      "PriceAccountSuccess",
      [ACCOUNT_PARAM],
    ),
    "/api/prices/history": get(
      "pricesHistory",
      "模型的价格历史",
      "一个模型在调用者各站点的标价（分组倍率 1）每次变化及其时间；全为 null 表示模型下架。",
      "PriceHistorySuccess",
    ),
    "/api/prices/whatif": get(
      "pricesWhatIf",
      "如果在别处",
      "范围内各模型的实际用量（全部账户合计）与花费，以及同样的用量按每个提供该模型的账户的价格要花多少（从便宜到贵）；" +
        "totals.cheapestUsd 为每个模型都用最便宜的账户时的花费，savingUsd 为可省下的。",
      "PriceWhatIfSuccess",
    ),
    "/api/prices/table.csv": fileRoute(
      "pricesTableCsv",
      "导出模型价格表",
      "模型价格表（/api/prices 的 CSV）：每个模型一行，各账户的每百万 tokens 输入/输出价格（美元）并列。" + READ,
      "text/csv",
    ),
  };
}
