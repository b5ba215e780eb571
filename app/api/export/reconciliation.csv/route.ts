import { queryOf, restFile } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restFile(req, (caller) => caller.export.reconciliationCsv(queryOf(req)));
}
