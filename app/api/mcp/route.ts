import { mcpHandler } from "@/src/server/http/mcp";

export const dynamic = "force-dynamic";

/** The MCP endpoint for agents (Streamable HTTP, stateless): src/server/http/mcp.ts. */
export { mcpHandler as POST, mcpHandler as GET, mcpHandler as DELETE };
