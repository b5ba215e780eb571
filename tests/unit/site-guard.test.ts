import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError, callSite } from "../../src/server/gateway/client";
import { PRIVATE_REFUSAL, guardSite, guardSites } from "../../src/server/net/site-guard";

/**
 * A workspace's own site is called on public addresses only (docs/design.md 25): a literal
 * loopback address is refused before anything is sent, and a name is checked on the resolver's
 * answer as it is connected to (`localhost` resolves to loopback), so a site whose name later
 * points inside reaches nothing. The operator's sites are called as before.
 */
let server: Server;
let port = 0;
let seen = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    seen++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ success: true, data: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  guardSites([]);
  await new Promise((resolve) => server.close(resolve));
});

const call = (siteUrl: string, guard?: boolean) =>
  callSite({ siteUrl, path: "/api/status", timeoutMs: 2000, ...(guard === undefined ? {} : { guard }) });

describe("calls to a workspace's own site", () => {
  it("never reach a loopback address, by number or by a name that resolves there", async () => {
    seen = 0;
    for (const url of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::ffff:127.0.0.1]:${port}`]) {
      await expect(call(url, true)).rejects.toEqual(new GatewayError(PRIVATE_REFUSAL));
    }
    expect(seen).toBe(0);
  });

  it("are known by address: a site added as a workspace's own is guarded without being told", async () => {
    seen = 0;
    const url = `http://localhost:${port}`;
    expect((await call(url)).status).toBe(200);
    guardSite(url);
    await expect(call(url)).rejects.toEqual(new GatewayError(PRIVATE_REFUSAL));
    guardSites([]);
    expect((await call(url)).status).toBe(200);
    expect(seen).toBe(2);
  });
});
