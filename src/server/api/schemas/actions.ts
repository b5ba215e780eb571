import { z } from "zod";
import {
  actionRecordsSchema,
  checkinResultSchema,
  checkinStatusSchema,
  redeemResultSchema,
} from "../../actions/schemas";
import { successOf } from "../../core/messages";
import { intWithDefault } from "./params";

// Writes on an account's site (design.md 20): inputs, and answers in the success envelope.

export const redeemInput = z.object({
  code: z.string().max(256).meta({ description: "兑换码（前后的空白会被去掉）" }),
});

export const recordsInput = z
  .object({ page: intWithDefault(1, 10_000, 1), pageSize: intWithDefault(1, 100, 20) })
  .prefault({});

const success = <T extends z.ZodType>(data: T, id: string) => successOf(data).meta({ id });

export const redeemSuccess = success(redeemResultSchema, "RedeemSuccess");
export const checkinStatusSuccess = success(checkinStatusSchema, "CheckinStatusSuccess");
export const checkinResultSuccess = success(checkinResultSchema, "CheckinResultSuccess");
export const actionRecordsSuccess = success(actionRecordsSchema, "ActionRecordsSuccess");

export const checkinAllSuccess = success(
  z
    .object({
      results: z.array(
        z.object({
          name: z.string().describe("站点 · 账户"),
          state: z.enum(["done", "already", "manual", "disabled", "unsupported", "failed"]),
          message: z.string(),
        }),
      ),
    })
    .meta({ id: "CheckinAll" }),
  "CheckinAllSuccess",
);
