import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { sessionStore } from "../../session/store";
import { doneSchema } from "../../core/messages";
import { isLedgerOnly } from "../../workspace/scope";
import { authedProcedure, router } from "../trpc";

const sessionListSchema = z.array(
  z.object({ id: z.string(), createdAt: z.iso.datetime(), expiresAt: z.iso.datetime(), current: z.boolean() }),
);

/**
 * Only a holder the site accepts now lists or ends an account's sessions (docs/design.md 24): a saved
 * account that needs re-authorisation reads its kept history and nothing more.
 */
const holderProcedure = authedProcedure.use(({ ctx, next }) => {
  if (isLedgerOnly(ctx.session)) {
    throw new TRPCError({ code: "FORBIDDEN", message: ctx.saved?.problem ?? "需要重新授权后才能管理会话" });
  }
  return next();
});

/** The sessions of the signed-in account (its site and user id) held with the same token. Tokens are never listed. */
export const sessionRouter = router({
  list: holderProcedure.output(sessionListSchema).query(async ({ ctx }) => {
    const rows = await sessionStore(ctx.db).listForAccount(ctx.session);
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
      current: row.id === ctx.session.id,
    }));
  }),

  revoke: holderProcedure
    .output(doneSchema)
    .input(z.object({ id: z.string().regex(/^[0-9a-f]{64}$/, "会话编号无效") }))
    .mutation(async ({ ctx, input }) => {
      // One conditional delete: another user's session id matches no row.
      if (!(await sessionStore(ctx.db).removeOwn(ctx.session, input.id))) {
        throw new TRPCError({ code: "NOT_FOUND", message: "会话不存在或已结束" });
      }
      return { success: true as const };
    }),

  revokeOthers: holderProcedure.output(doneSchema.extend({ ended: z.number().int() })).mutation(async ({ ctx }) => {
    const ended = await sessionStore(ctx.db).removeOthers(ctx.session);
    return { success: true as const, ended };
  }),
});
