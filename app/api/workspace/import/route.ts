import { IMPORT_MAX_BYTES } from "@/src/server/net/body";
import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The body is the backup file itself (All API Hub or metapi JSON), up to 4 MiB. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body: unknown) => caller.workspace.importAccounts({ file: body }), {
    readBody: true,
    maxBody: IMPORT_MAX_BYTES,
  });
}
