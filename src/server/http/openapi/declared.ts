/**
 * The operation of an endpoint whose part's file writes none: made from its declaration (summary,
 * description, who may call it) and its procedure's output schema, so that a new endpoint is its
 * procedure and one declaration. Its parameters and body come from requests.ts like any other's.
 */
import { z } from "zod";
import type { RestEndpoint } from "../dispatch";
import {
  ADMIN_SECURITY,
  FORBIDDEN,
  INTERNAL,
  SESSION_SECURITY,
  UNAUTHORIZED,
  UNAVAILABLE,
  WORKSPACE_SECURITY,
  json,
  ref,
} from "./common";

type Json = Record<string, unknown>;

const SECURITY = {
  session: SESSION_SECURITY,
  workspace: WORKSPACE_SECURITY,
  admin: ADMIN_SECURITY,
  public: [],
};

/** `tokens.setStatus` → `tokensSetStatus`. */
const operationIdOf = (procedure: string) => procedure.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());

/**
 * The answer's schema: a reference where the schema is a component already, else the schema
 * itself, the components it names added to `components` (a reference to one keeps pointing at it).
 */
function answerSchema(output: z.ZodType | undefined, components: Record<string, unknown>): Json {
  if (!output) return {};
  const id = (output.meta() as { id?: string } | undefined)?.id;
  if (id && id in components) return ref(id);
  const text = JSON.stringify(
    z.toJSONSchema(output, { io: "output", unrepresentable: "any", target: "draft-2020-12" }),
  ).replaceAll('"#/$defs/', '"#/components/schemas/');
  const schema = JSON.parse(text) as Json;
  for (const [name, def] of Object.entries((schema.$defs ?? {}) as Record<string, Json>)) components[name] ??= def;
  delete schema.$defs;
  delete schema.$schema;
  return schema;
}

export function declaredOperation(
  endpoint: RestEndpoint,
  output: z.ZodType | undefined,
  components: Record<string, unknown>,
): Json {
  const { route } = endpoint;
  const auth = route.auth ?? "session";
  const writes = route.method !== "GET";
  return {
    operationId: operationIdOf(endpoint.procedure),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: SECURITY[auth],
    responses: {
      "200": {
        description: "成功时 success 为 true；参数无效或被拒绝时 success 为 false，message 说明原因",
        content: json({ oneOf: [answerSchema(output, components), ref("Failure")] }),
      },
      ...(auth === "public" ? {} : { "401": UNAUTHORIZED }),
      ...(writes ? { "403": FORBIDDEN } : {}),
      "500": INTERNAL,
      "503": UNAVAILABLE,
    },
  };
}
