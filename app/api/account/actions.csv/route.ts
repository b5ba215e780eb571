import { restFile } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The account's 操作记录 as CSV. */
export function GET(req: Request): Promise<Response> {
  return restFile(req, (caller) => caller.actions.recordsCsv());
}
