import { dispatch } from "@/src/server/http/dispatch";

export const dynamic = "force-dynamic";

/** Every REST endpoint, each declared on its procedure (src/server/api/rest-routes.ts). */
export { dispatch as GET, dispatch as POST, dispatch as PUT, dispatch as PATCH, dispatch as DELETE };
