import { restFile } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The price comparison as CSV. */
export function GET(req: Request): Promise<Response> {
  return restFile(req, (caller) => caller.prices.tableCsv());
}
