/**
 * The workspace's cookie in a browser: the session token itself (only its hash is stored),
 * `HttpOnly`, `SameSite=Lax` (a link from elsewhere opens the dashboard signed in; every write is
 * checked for its origin), kept as long as a session can live (90 days; the store ends it sooner
 * when it sits unused for 30). Apart from the accounts' and the operator's cookies.
 */
import { tokenCookie } from "../net/token-cookie";
import { WORKSPACE_MAX_MS } from "./workspaces";

export const workspaceCookie = tokenCookie("gd_workspace", "Lax", WORKSPACE_MAX_MS / 1000);
