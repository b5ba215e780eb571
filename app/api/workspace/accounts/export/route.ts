import { queryOf, restFile } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** `?format=csv` for a spreadsheet; JSON otherwise. No token is ever in it. */
export function GET(req: Request): Promise<Response> {
  return restFile(req, (caller) => caller.workspace.exportAccounts(queryOf(req)));
}
