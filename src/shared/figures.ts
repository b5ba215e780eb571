/**
 * The figures a person reads, each with its one definition (docs/figures.md): the name every
 * surface uses for it and the sentence that defines it. Schemas, the MCP tools and the pages take
 * their words from here; the one function that computes each is named in docs/figures.md.
 */
export const FIGURES = {
  daysLeft: {
    name: "预计可用天数",
    definition:
      "按近 7 天（7 × 24 小时，含当前小时）的消费速度，钱包与套餐合起来还能用的天数（按扣费偏好先后扣、套餐按周期重置、到期为止），保留一位小数；没有余额或近 7 天没有消费时为 null",
  },
  walletDaysLeft: {
    name: "只用钱包的预计可用天数",
    definition: "同样的速度只用钱包还能用的天数，保留一位小数，作对比",
  },
} as const satisfies Record<string, { name: string; definition: string }>;
