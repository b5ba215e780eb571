import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError, callSite } from "../../src/server/gateway/client";
import { PRIVATE_REFUSAL, guardSite, guardSites, guardedFetch } from "../../src/server/net/site-guard";

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
  server = createServer((req, res) => {
    seen++;
    if (req.url === "/moved") {
      res.writeHead(302, { location: "http://10.0.0.1/" }).end();
      return;
    }
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

describe("a guarded call that is let through", () => {
  it("answers as the platform's fetch would: status, headers, body, a redirect not followed", async () => {
    // Loopback stands for a public address here (the resolver's filter named in its place).
    const url = `http://localhost:${port}/api/status`;
    const answer = await guardedFetch(url, { headers: { accept: "application/json" } }, false, () => false);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(await answer.json()).toEqual({ success: true, data: {} });
    const moved = await guardedFetch(`http://localhost:${port}/moved`, {}, false, () => false);
    expect([moved.status, moved.headers.get("location")]).toEqual([302, "http://10.0.0.1/"]);
    await moved.body?.cancel();
  });
});
