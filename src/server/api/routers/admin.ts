import { z } from "zod";
import { clearOperatorCookie, setOperatorCookie } from "../../admin/cookie";
import {
  AUDIT_ACTIONS,
  OperatorError,
  audit,
  auditLog,
  operatorPasswordSet,
  operatorSignIn,
  operatorSignOut,
} from "../../admin/operator";
import { addSite, editSite, listSites, probeSites, removeSite } from "../../admin/sites";
import { intParam, optionalParam } from "../schemas/params";
import { doneSchema, failure, failureSchema, orFailure, successOf } from "../../core/messages";
import {
  auditPageSchema,
  moveOutcomeSchema,
  probeFindingSchema,
  siteRowSchema,
  workspacesAdminSchema,
} from "../../admin/schemas";
import { siteLedger } from "../../ledger/sites";
import { parseSiteId, siteRegistry } from "../../sites/registry";
import { failingBySite } from "../../ledger/sync-status";
import { signup, workspaceTotals } from "../../workspace/signup";
import type { Context } from "../context";
import { operatorProcedure, publicProcedure, router, signInProcedure } from "../trpc";
import { rest } from "../rest-routes";

/** The body as it came: a missing or wrong password is the uniform 401, not a 400. */
const loginBody = z.custom<{ password?: unknown } | undefined>(() => true);

/** Signs the operator in; a refusal (OperatorError) reaches the error map with its code and Retry-After. */
async function signIn(ctx: Context, body: { password?: unknown } | undefined) {
  const password = typeof body === "object" && body !== null ? body.password : undefined;
  const { token } = await operatorSignIn(ctx.db, {
    password,
    clientAddress: ctx.clientAddress,
    perMinute: ctx.adminLoginRateLimit,
  });
  setOperatorCookie(ctx.resHeaders, token, ctx.secure);
  ctx.resHeaders.set("Cache-Control", "no-store");
  return token;
}

const siteId = z
  .union([z.number(), z.string().max(12)])
  .transform((v, ctx) => {
    const id = parseSiteId(v);
    if (id === null) ctx.addIssue({ code: "custom", message: "站点编号无效" });
    return id ?? 0;
  })
  .meta({ description: "站点 id" });
const auditInput = z
  .object({
    /** `siteAdd,siteEdit` in a query string, or an array. */
    actions: optionalParam(
      z
        .union([z.string().transform((v) => v.split(",").filter(Boolean)), z.array(z.string())])
        .pipe(z.array(z.enum(AUDIT_ACTIONS)).min(1)),
    ).meta({ description: `只看这些操作，逗号分隔：${AUDIT_ACTIONS.join("、")}` }),
    siteId: optionalParam(siteId).meta({ description: "只看这个站点的变更" }),
    before: optionalParam(intParam(1, 999_999_999)).meta({ description: "只看 id 小于它的条目（上一页答复的 next）" }),
    limit: optionalParam(intParam(1, 200)).meta({ description: "每页条数，1–200，默认 50" }),
  })
  .prefault({});
/** A budget: a number, or "" / null to use the default. */
const budget = z
  .union([z.literal("").transform(() => null), z.null(), z.number(), z.string().regex(/^\d+$/).transform(Number)])
  .pipe(z.number().int().min(1).max(100_000).nullable())
  .optional();
const yes = z.union([z.boolean(), z.string()]).transform((v) => v === true || v === "1" || v === "true");
const siteInput = {
  name: z.string().max(200).meta({ description: "站点名称" }),
  url: z.string().max(2048).meta({ description: "站点地址（http 或 https）" }),
  requestsPerMinute: budget.meta({ description: "每分钟请求预算（1–100000）；null 或空为默认值" }),
  confirmUnreachable: yes.optional().meta({ description: "站点无法访问时仍然保存" }),
};
const addInput = z.object(siteInput);
const editInput = z.object({
  id: siteId,
  ...siteInput,
  name: siteInput.name.optional(),
  url: siteInput.url.optional(),
  sameGateway: yes.optional().meta({
    description: "仅修改地址时：新地址是同一网关（账本保留）；须新地址可访问且探测到的类型与系统名称与原站点一致",
  }),
});

/**
 * A site change. A registry refusal (bad URL, unknown id) or a needed confirmation (with the
 * probe's finding) is answered in words by the API's error map.
 */
async function change<T>(op: () => Promise<T>) {
  return { success: true as const, data: await op() };
}

/** A change's answer: done, a refusal, or the question whether to save a site that did not answer. */
const changeAnswer = <T extends z.ZodType>(data: T) =>
  z.union([
    successOf(data),
    failureSchema.extend({ needsConfirmation: z.literal(true), probe: probeFindingSchema }),
    failureSchema,
  ]);
const siteChange = <S extends z.ZodRawShape>(extra: S) =>
  changeAnswer(z.object({ site: siteRowSchema, probe: probeFindingSchema.nullable(), ...extra }));

const actorOf = (ctx: Context) => ctx.clientAddress ?? "unknown";
const probeOpts = (ctx: Context) => ({
  timeoutMs: ctx.timeoutMs,
  perMinute: ctx.siteRequestsPerMinute,
  ledger: siteLedger(ctx.db),
});

/** Site administration (docs/design.md 15): the operator's sign-in, the sites, and what operators did. */
export const adminRouter = router({
  /** Whether an operator password is set (the admin page explains how to set one when not). */
  status: publicProcedure
    .output(z.object({ passwordSet: z.boolean() }))
    .query(async ({ ctx }) => ({ passwordSet: await operatorPasswordSet(ctx.db) })),

  /** REST POST /api/admin/login: the token for Bearer use (the cookie is set too). */
  login: signInProcedure
    .meta(rest("POST", "/api/admin/login"))
    .input(loginBody)
    .output(successOf(z.object({ token: z.string() })))
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      data: { token: await signIn(ctx, input) },
    })),

  /** The admin page's sign-in: the same, answered without the token (the cookie carries it). */
  signIn: signInProcedure
    .input(loginBody)
    .output(orFailure(doneSchema))
    .mutation(async ({ ctx, input }) => {
      try {
        await signIn(ctx, input);
        return { success: true as const };
      } catch (error) {
        // The page shows the message; HTTP errors are for REST clients (and fill the console).
        if (error instanceof OperatorError && (error.kind === "wrong" || error.kind === "notSet")) {
          return failure(error.message);
        }
        throw error;
      }
    }),

  /** REST POST /api/admin/logout: ends the operator session. */
  logout: operatorProcedure
    .meta(rest("POST", "/api/admin/logout", { input: "none" }))
    .output(doneSchema)
    .mutation(async ({ ctx }) => {
      await operatorSignOut(ctx.db, ctx.operatorToken);
      clearOperatorCookie(ctx.resHeaders, ctx.secure);
      return { success: true as const };
    }),

  /** Every site with its profile, health, budget, live sessions and ledger entries. */
  sites: operatorProcedure
    .meta(rest("GET", "/api/admin/sites"))
    .output(successOf(z.array(siteRowSchema)))
    .query(async ({ ctx }) => ({
      success: true as const,
      data: await listSites(ctx.db, siteLedger(ctx.db)),
    })),

  /** Adds a site after probing it (an unreachable one only with confirmUnreachable). */
  addSite: operatorProcedure
    .meta(rest("POST", "/api/admin/sites"))
    .input(addInput)
    .output(siteChange({}))
    .mutation(({ ctx, input }) => change(() => addSite(ctx.db, input, actorOf(ctx), probeOpts(ctx)))),

  /**
   * Changes a site's name, address (probed first) or request budget. A move ends the sessions of
   * the old address and sets the ledger apart, unless `sameGateway` and the probe agrees.
   */
  editSite: operatorProcedure
    .meta(rest("PATCH", "/api/admin/sites/{id}"))
    .input(editInput)
    .output(siteChange({ move: moveOutcomeSchema.nullable() }))
    .mutation(({ ctx, input: { id, ...rest } }) =>
      change(() => editSite(ctx.db, id, rest, actorOf(ctx), probeOpts(ctx))),
    ),

  /** Removes a site when `confirm` is given; without it, says how many live sessions it has. */
  removeSite: operatorProcedure
    .meta(rest("DELETE", "/api/admin/sites/{id}"))
    .input(z.object({ id: siteId, confirm: yes.optional().meta({ description: "1：确认移除" }) }))
    .output(changeAnswer(z.object({ removed: z.boolean(), liveSessions: z.number().int() })))
    .mutation(({ ctx, input }) => change(() => removeSite(ctx.db, input.id, input.confirm === true, actorOf(ctx)))),

  /** Probes one site, or every site when no id is given, now. */
  probe: operatorProcedure
    .meta(rest("POST", "/api/admin/sites/{id}/probe", { input: "none" }))
    .input(z.object({ id: optionalParam(siteId) }).prefault({}))
    .output(orFailure(successOf(z.array(siteRowSchema))))
    .mutation(async ({ ctx, input }) => {
      const all = (await listSites(ctx.db, siteLedger(ctx.db))).map((s) => s.id);
      const ids = input.id === undefined ? all : all.filter((id) => id === input.id);
      if (input.id !== undefined && ids.length === 0) return failure(`站点不存在: ${input.id}`);
      return { success: true as const, data: await probeSites(ctx.db, ids, probeOpts(ctx)) };
    }),

  /**
   * Operator sign-ins, failed sign-ins (one entry per address and ten minutes, counted) and
   * changes, newest first, a page at a time; filtered by action and site.
   */
  audit: operatorProcedure
    .meta(rest("GET", "/api/admin/audit"))
    .input(auditInput)
    .output(successOf(auditPageSchema))
    .query(async ({ ctx, input }) => ({ success: true as const, data: await auditLog(ctx.db, input) })),

  /** Who may create a workspace, the invite codes, and how many workspaces and accounts there are. */
  workspaces: operatorProcedure.output(successOf(workspacesAdminSchema)).query(async ({ ctx }) => {
    const rules = signup(ctx.db);
    const [mode, invites, totals, failing, names] = await Promise.all([
      rules.mode(),
      rules.invites(),
      workspaceTotals(ctx.db),
      failingBySite(ctx.db),
      siteRegistry(ctx.db).listProfiled(),
    ]);
    const siteIds = [...new Set([...totals.bySite.keys(), ...failing.keys()])]
      .filter((id) => id > 0)
      .sort((a, b) => a - b);
    const sites = siteIds.map((siteId) => ({
      siteId,
      siteName: names.find((s) => s.id === siteId)?.name ?? null,
      accounts: totals.bySite.get(siteId)?.accounts ?? 0,
      reauth: totals.bySite.get(siteId)?.reauth ?? 0,
      failing: failing.get(siteId) ?? 0,
    }));
    return {
      success: true as const,
      data: {
        mode,
        workspaces: totals.workspaces,
        accounts: totals.accounts,
        reauth: totals.reauth,
        sites,
        invites: invites.map((i) => ({
          ...i,
          createdAt: i.createdAt.toISOString(),
          expiresAt: i.expiresAt.toISOString(),
          usedAt: i.usedAt?.toISOString() ?? null,
        })),
      },
    };
  }),

  /** Open creation to anyone, or to invite codes only (audited). */
  setSignup: operatorProcedure
    .input(z.object({ mode: z.enum(["open", "invite"]) }))
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      await signup(ctx.db).setMode(input.mode);
      await audit(ctx.db, { action: "signupMode", actor: actorOf(ctx), after: { mode: input.mode } });
      return { success: true as const };
    }),

  /** A one-time invite code, valid 30 days, shown this once (audited without the code). */
  createInvite: operatorProcedure
    .input(z.object({ note: optionalParam(z.string().max(100)) }).prefault({}))
    .output(successOf(z.object({ code: z.string(), expiresAt: z.iso.datetime() })))
    .mutation(async ({ ctx, input }) => {
      const invite = await signup(ctx.db).createInvite(input.note ?? null);
      await audit(ctx.db, { action: "inviteCreate", actor: actorOf(ctx), after: { note: input.note ?? null } });
      return { success: true as const, data: { code: invite.code, expiresAt: invite.expiresAt.toISOString() } };
    }),
});
