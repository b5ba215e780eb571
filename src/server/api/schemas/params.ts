import { z } from "zod";
import { MSG } from "../../core/messages";

/**
 * Parameter schemas shared by the procedures. Parameters arrive as JSON (tRPC) or as query strings
 * (REST), so numbers and flags accept both; an empty value counts as absent. No `preprocess`: the
 * client's input types are inferred from these.
 */

/** Optional; "" and null are absent. */
export const optionalParam = <T extends z.ZodType>(schema: T) =>
  z
    .union([z.literal(""), z.null(), schema])
    .optional()
    .transform((v) => (v === "" || v === null ? undefined : (v as z.output<T>)));

/** An integer, from a number or its decimal string. */
export const intParam = (min: number, max: number) =>
  z
    .union([
      z.number(),
      z
        .string()
        .regex(/^\d{1,9}$/)
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));

/** An integer with its default when absent. */
export const intWithDefault = (min: number, max: number, fallback: number) =>
  optionalParam(intParam(min, max)).transform((v) => v ?? fallback);

/** A page of a listing, from 1. */
export const pageParam = intWithDefault(1, 10_000, 1).meta({ description: "页码，从 1 开始（默认 1）" });

/** Rows per page of a listing. */
export const pageSizeParam = intWithDefault(1, 100, 20).meta({
  description: "每页条数（默认 20），各类站点含义相同（one-api 站点每页固定 10 条，更大的页由本服务连续读取多页拼成）",
});

/** A yes/no: true/false, or "1"/"0"/"true"/"false" in a query string. */
export const flag = optionalParam(
  z.union([z.boolean(), z.enum(["1", "0", "true", "false"])]).transform((v) => v === true || v === "1" || v === "true"),
);

/** A name to filter by. */
export const nameParam = optionalParam(z.string().trim().min(1).max(128));

/** One of `values`, with its default when absent. */
export const choice = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  optionalParam(z.enum(values)).transform((v) => v ?? fallback);

/** The name of the first bad parameter of a failed parse, as the answer's message. */
export function badParamMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  const param = issue && issue.path.length > 0 ? String(issue.path[0]) : "参数";
  return `${MSG.badParamPrefix}${param}`;
}
