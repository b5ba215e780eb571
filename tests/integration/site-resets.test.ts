import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError, callSite } from "../../src/server/gateway/client";

/**
 * A site that closes a connection under a request (a kept-alive one it had just let go of, as a
 * busy machine sees now and then): a read is sent once more on a new connection; a write is not.
 */
let server: Server;
let url = "";
const seen: string[] = [];
let resets = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (resets > 0) {
      resets--;
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ success: true, data: { id: 1 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("a connection reset under a call", () => {
  it("sends a read once more, and answers it", async () => {
    seen.length = 0;
    resets = 1;
    const answer = await callSite({ siteUrl: url, path: "/api/user/self", accessToken: "t", timeoutMs: 2000 });
    expect(answer.status).toBe(200);
    expect(seen).toEqual(["GET /api/user/self", "GET /api/user/self"]);
  });

  it("does not send a write twice, nor a read a third time", async () => {
    seen.length = 0;
    resets = 1;
    const write = callSite({ siteUrl: url, path: "/api/user/topup", method: "POST", body: {}, timeoutMs: 2000 });
    await expect(write).rejects.toEqual(new GatewayError("连接被重置"));
    expect(seen).toEqual(["POST /api/user/topup"]);
    seen.length = 0;
    resets = 2;
    await expect(callSite({ siteUrl: url, path: "/api/status", timeoutMs: 2000 })).rejects.toEqual(
      new GatewayError("连接被重置"),
    );
    expect(seen).toEqual(["GET /api/status", "GET /api/status"]);
  });
});
