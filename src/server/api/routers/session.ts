import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { sessionStore } from "../../session/store";
import { doneSchema } from "../../core/messages";
import { authedProcedure, router } from "../trpc";

const sessionListSchema = z.array(
  z.object({ id: z.string(), createdAt: z.iso.datetime(), expiresAt: z.iso.datetime(), current: z.boolean() }),
);

/** The sessions of the signed-in account (its site and user id). Tokens are never listed. */
export const sessionRouter = router({
  list: authedProcedure.output(sessionListSchema).query(async ({ ctx }) => {
    const rows = await sessionStore(ctx.db).listForAccount(ctx.session);
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
      current: row.id === ctx.session.id,
    }));
  }),

  revoke: authedProcedure
    .output(doneSchema)
    .input(z.object({ id: z.string().regex(/^[0-9a-f]{64}$/, "会话编号无效") }))
    .mutation(async ({ ctx, input }) => {
      // One conditional delete: another user's session id matches no row.
      if (!(await sessionStore(ctx.db).removeOwn(ctx.session, input.id))) {
        throw new TRPCError({ code: "NOT_FOUND", message: "会话不存在或已结束" });
      }
      return { success: true as const };
    }),

  revokeOthers: authedProcedure.output(doneSchema.extend({ ended: z.number().int() })).mutation(async ({ ctx }) => {
    const ended = await sessionStore(ctx.db).removeOthers(ctx.session);
    return { success: true as const, ended };
  }),
});
