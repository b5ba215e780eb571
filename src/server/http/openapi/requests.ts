/**
 * The requests' half of the OpenAPI document, generated from what the server itself checks: each
 * endpoint's parameters and body are its procedure's zod input (z.toJSONSchema), split by its
 * declaration (api/rest-routes.ts) into the path's parameters and the query string or the JSON
 * body. An endpoint whose declaration builds its input in another shape (the site proxy, the
 * import's file) keeps the parts its path file writes.
 */
import { z } from "zod";
import type { RestEndpoint } from "../dispatch";

type Json = Record<string, unknown>;
type ZodDef = { type: string; in?: z.ZodType; out?: z.ZodType };
const defOf = (schema: unknown) => (schema as { _zod: { def: ZodDef } })._zod.def;

/**
 * A parameter given as a number or its decimal string is checked as the number it becomes: its
 * schema is that number's (integer, minimum, maximum), not the two spellings it accepts.
 */
function numberAfterPipe(ctx: { zodSchema: unknown; jsonSchema: Json }): void {
  const def = defOf(ctx.zodSchema);
  if (def.type !== "pipe" || !def.out || defOf(def.out).type !== "number") return;
  const number = z.toJSONSchema(def.out, { io: "output" }) as Json;
  delete number.$schema;
  const { description } = ctx.jsonSchema;
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, number, description === undefined ? {} : { description });
}

const isBlank = (s: unknown) => {
  const o = s as Json;
  return (o.type === "string" && o.const === "") || (o.type === "null" && Object.keys(o).length === 1);
};

/**
 * A schema as a reader wants it: "" and null, which every optional parameter takes as absent, are
 * not listed as values of their own; nested alternatives are one list; one alternative is itself.
 */
function tidy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(tidy);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, tidy(v)]));
  if (Array.isArray(out.anyOf)) {
    const options = (out.anyOf as Json[])
      .flatMap((o) => (Array.isArray(o.anyOf) && Object.keys(o).length === 1 ? (o.anyOf as Json[]) : [o]))
      .filter((o) => !isBlank(o));
    const rest = { ...out };
    delete rest.anyOf;
    // What is said of the whole (its description) stays over what is said of its one alternative.
    return options.length === 1 ? { ...options[0], ...rest } : { ...rest, anyOf: options };
  }
  return out;
}

/** The procedure's input as one JSON Schema object (its inputs' properties together), or null when it is not an object. */
export function inputObject(inputs: z.ZodType[]): { properties: Record<string, Json>; required: string[] } | null {
  if (inputs.length === 0) return { properties: {}, required: [] };
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const input of inputs) {
    const generated = z.toJSONSchema(input, { io: "input", unrepresentable: "any", override: numberAfterPipe }) as Json;
    const defs = (generated.$defs ?? {}) as Record<string, Json>;
    const ref = typeof generated.$ref === "string" ? generated.$ref.replace("#/$defs/", "") : null;
    const schema = tidy(ref ? defs[ref] : generated) as Json;
    if (schema.type !== "object" || typeof schema.properties !== "object") return null;
    Object.assign(properties, schema.properties);
    required.push(...((schema.required as string[] | undefined) ?? []));
  }
  return { properties, required };
}

/** The schema of one parameter, its description beside it (OpenAPI's place for it). */
function parameter(name: string, where: "path" | "query", schema: Json, required: boolean): Json {
  const { description, ...rest } = schema;
  return { name, in: where, required, ...(description ? { description } : {}), schema: rest };
}

/**
 * The endpoint's parameters and body from its procedure's input; null when its declaration makes
 * the input in another shape, or the input is not an object (the contract's own sign-in parsing).
 */
export function requestParts(
  endpoint: RestEndpoint,
  inputs: z.ZodType[],
): { parameters: Json[]; requestBody?: Json } | null {
  const { route } = endpoint;
  if (route.shape) return null;
  const input = inputObject(inputs);
  if (!input) return null;
  const inPath = endpoint.segments.flatMap((s) => ("param" in s ? [s.param] : []));
  const parameters = inPath.map((name) => parameter(name, "path", input.properties[name] ?? { type: "string" }, true));
  const rest = Object.entries(input.properties).filter(([name]) => !inPath.includes(name));
  const carried = route.input ?? (route.method === "GET" || route.method === "DELETE" ? "query" : "body");
  if (carried === "query")
    for (const [name, schema] of rest) parameters.push(parameter(name, "query", schema, input.required.includes(name)));
  if (carried !== "body" || rest.length === 0) return { parameters };
  const required = input.required.filter((name) => !inPath.includes(name));
  const body = { type: "object", properties: Object.fromEntries(rest), ...(required.length ? { required } : {}) };
  return { parameters, requestBody: { required: true, content: { "application/json": { schema: body } } } };
}
