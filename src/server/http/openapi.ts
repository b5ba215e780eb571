/**
 * The OpenAPI 3.1 document of the REST endpoints, generated from what the server checks and
 * answers: each endpoint's parameters and body from its procedure's zod input and its declaration
 * (openapi/requests.ts), the answers' schemas (components) from the zod schemas the procedures
 * answer with (JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so zod's output is used as is).
 * The parts' files write what no schema says: each operation's summary, description, examples
 * and failures; a test holds their paths to the endpoints the procedures declare
 * (api/rest-routes.ts), and keeps them from writing a parameter or body the input generates.
 */
import type { z } from "zod";
import { appRouter } from "../api/root";
import { restEndpoints } from "./dispatch";
import { requestParts } from "./openapi/requests";
import { declaredOperation } from "./openapi/declared";
import { components } from "./openapi/components";
import { actionPaths } from "./openapi/action-paths";
import { tokenPaths } from "./openapi/token-paths";
import { alertPaths } from "./openapi/alert-paths";
import { pricePaths } from "./openapi/price-paths";
import { opsPaths } from "./openapi/ops-paths";
import { adminPaths } from "./openapi/admin-paths";
import { userPaths } from "./openapi/user-paths";
import { workspacePaths } from "./openapi/workspace-paths";

let cached: object | undefined;

type Operation = { parameters?: object[]; requestBody?: object };
type ProcedureDef = { _def: { inputs: z.ZodType[]; output?: z.ZodType } };

/** What the parts' files write, before the requests are generated into it. */
export function writtenPaths(): Record<string, Record<string, Operation>> {
  return mergePaths(
    userPaths(),
    actionPaths(),
    tokenPaths(),
    workspacePaths(),
    alertPaths(),
    pricePaths(),
    adminPaths(),
    opsPaths(),
  ) as Record<string, Record<string, Operation>>;
}

/**
 * The written paths, with the operation of each endpoint they do not write made from its
 * declaration (its answer's components added to `components`), and each endpoint's parameters and
 * body generated from its procedure's input.
 */
function withRequests(
  paths: Record<string, Record<string, Operation>>,
  components: Record<string, unknown>,
): Record<string, object> {
  const procedures = appRouter._def.procedures as unknown as Record<string, ProcedureDef>;
  for (const endpoint of restEndpoints()) {
    const { route } = endpoint;
    const procedure = procedures[endpoint.procedure];
    const path = route.path.replace("{path...}", "{path}");
    const method = route.method.toLowerCase();
    if (!paths[path]?.[method] && route.summary)
      (paths[path] ??= {})[method] = declaredOperation(endpoint, procedure?._def.output, components);
    const operation = paths[path]?.[method];
    const parts = operation && requestParts(endpoint, procedure?._def.inputs ?? []);
    if (!operation || !parts) continue;
    operation.parameters = [...parts.parameters, ...(operation.parameters ?? [])];
    if (parts.requestBody) operation.requestBody = parts.requestBody;
  }
  return paths;
}

/** The parts' paths as one, a route's methods from every part that documents it. */
function mergePaths(...parts: Array<Record<string, object>>): Record<string, object> {
  const out: Record<string, object> = {};
  for (const part of parts)
    for (const [path, methods] of Object.entries(part)) out[path] = { ...out[path], ...methods };
  return out;
}

export function openApiDocument(): object {
  if (cached) return cached;
  const schemas = components();
  const paths = withRequests(writtenPaths(), schemas);
  cached = {
    openapi: "3.1.0",
    info: {
      title: "网关站点控制台 API",
      version: "1.0.0",
      description:
        "用所选网关站点（one-api / new-api 系列）的用户ID与系统访问令牌登录，取得会话令牌。" +
        "除会话检查、请求体大小与频率限制外，所有结果都以 HTTP 200 返回，由 success 字段区分。",
    },
    paths,
    components: {
      schemas,
      securitySchemes: {
        metricsToken: {
          type: "http",
          scheme: "bearer",
          description: "运维者设置的 METRICS_TOKEN（只用于 /api/metrics）。",
        },
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "登录返回的 sessionToken：Authorization: Bearer <sessionToken>；或工作区的会话令牌（gdw_…，/api/workspace/login 返回）" +
            "与 API 令牌（gdk_…），此时账户路由读取工作区的账户（?account=<id>）。同时携带 Cookie 时以此为准。",
        },
        cookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "gd_session",
          description: "浏览器会话 Cookie（HTTPS 下名为 __Host-gd_session）",
        },
        workspaceCookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "gd_workspace",
          description:
            "工作区的浏览器会话 Cookie（HTTPS 下名为 __Host-gd_workspace）；与 gd_session 同时存在时以工作区为准",
        },
        adminCookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "gd_admin",
          description:
            "管理员会话 Cookie（HTTPS 下名为 __Host-gd_admin）；管理员路由的 Bearer 为 /api/admin/login 返回的 token",
        },
      },
    },
  };
  return cached;
}
