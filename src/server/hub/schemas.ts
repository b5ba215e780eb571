/** The answers and inputs of the All API Hub sync (docs/design.md 26). */
import { z } from "zod";

const iso = z.string().describe("ISO 8601 时间");

const hubRunItemSchema = z.object({
  result: z
    .enum(["added", "changed", "removed", "kept", "refused", "skipped"])
    .describe(
      "added：新增；changed：令牌或地址已更新；removed：已删除；kept：保留（附原因）；refused：站点未通过验证；skipped：无法同步",
    ),
  name: z.string().describe("账户在扩展中的名称（站点名 · 用户名）或在此处的名称"),
  message: z.string().nullable(),
});

export const hubSyncSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      address: z.string().describe("在扩展「WebDAV 地址」中填写的地址"),
      deletes: z.enum(["remove", "keep"]).describe("扩展中删除的账户：remove 在此删除；keep 在此保留"),
      hasPassphrase: z.boolean().describe("工作区是否保存了扩展的加密密码（密码本身从不返回）"),
      encrypted: z.boolean().describe("扩展上次写入的文件是否加密"),
      fileAt: iso.nullable().describe("扩展上次写入的时间"),
      readAt: iso.nullable().describe("扩展上次读取的时间"),
      unsynced: z
        .array(z.object({ name: z.string(), message: z.string() }))
        .describe("扩展文件中未能保存到工作区的账户及原因（令牌不变时不再重试）"),
      runs: z
        .array(
          z.object({
            at: iso,
            message: z.string().nullable().describe("文件未被接受时的原因"),
            items: z.array(hubRunItemSchema),
          }),
        )
        .describe("最近的写入（最新在前），每个账户的结果"),
    }),
  })
  .meta({ id: "HubSync" });

export const hubSyncInput = z.object({
  deletes: z.enum(["remove", "keep"]).optional(),
  passphrase: z
    .string()
    .trim()
    .min(1, "加密密码不能为空")
    .max(200, "加密密码最多 200 个字符")
    .nullable()
    .optional()
    .describe("扩展「备份加密」的密码；null 删除保存的密码"),
});
