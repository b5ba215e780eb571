import { openApiDocument } from "@/src/server/openapi/document";
import { json } from "@/src/server/http/rest";

export const dynamic = "force-static";

export function GET(): Response {
  return json(openApiDocument(), 200);
}
