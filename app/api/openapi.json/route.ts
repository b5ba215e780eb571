import { openApiDocument } from "@/src/server/http/openapi";
import { json } from "@/src/server/http/respond";

export const dynamic = "force-static";

export function GET(): Response {
  return json(openApiDocument(), 200);
}
