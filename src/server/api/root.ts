import { accountRouter } from "./routers/account";
import { actionsRouter } from "./routers/actions";
import { tokensRouter } from "./routers/tokens";
import { alertsRouter } from "./routers/alerts";
import { opsRouter } from "./routers/ops";
import { pricesRouter } from "./routers/prices";
import { adminRouter } from "./routers/admin";
import { adminSitesRouter } from "./routers/admin-sites";
import { authRouter } from "./routers/auth";
import { exportRouter } from "./routers/export";
import { sessionRouter } from "./routers/session";
import { siteRouter } from "./routers/site";
import { usageRouter } from "./routers/usage";
import { workspaceRouter } from "./routers/workspace";
import { workspaceSecurityRouter } from "./routers/workspace-security";
import { workspaceSitesRouter } from "./routers/workspace-sites";
import { davRouter, hubSettingsRouter } from "./routers/hub";
import { workspaceBackupRouter } from "./routers/workspace-backup";
import { createCallerFactory, mergeRouters, router } from "./trpc";

export const appRouter = router({
  account: accountRouter,
  actions: actionsRouter,
  tokens: tokensRouter,
  alerts: alertsRouter,
  ops: opsRouter,
  prices: pricesRouter,
  admin: mergeRouters(adminRouter, adminSitesRouter),
  auth: authRouter,
  export: exportRouter,
  session: sessionRouter,
  site: siteRouter,
  usage: usageRouter,
  workspace: mergeRouters(
    workspaceRouter,
    workspaceSecurityRouter,
    workspaceSitesRouter,
    hubSettingsRouter,
    workspaceBackupRouter,
  ),
  dav: davRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
