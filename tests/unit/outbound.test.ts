import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { OutboundRefused, checkOutboundUrl, isInternalAddress, postOutbound } from "../../src/server/net/outbound";

/** Outbound requests to addresses people give: internal ranges refused, redirects not followed, bounded. */

const OPTS = { timeoutMs: 1000, maxBytes: 1024, allowPrivate: false };

describe("outbound safety", () => {
  it.each([
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["172.16.0.9", true],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["::1", true],
    ["fe80::1", true],
    ["fd00::1", true],
    ["::ffff:127.0.0.1", true],
    ["93.184.216.34", false],
    ["2606:4700::1111", false],
  ])("%s is internal: %s", (address, internal) => {
    expect(isInternalAddress(address)).toBe(internal);
  });

  it("refuses internal literals, other schemes and credentials before anything is sent", () => {
    for (const [url, message] of [
      ["http://127.0.0.1:8080/x", "不能发送到内网"],
      ["http://[::1]/x", "不能发送到内网"],
      ["ftp://example.com/x", "http:// 或 https://"],
      ["https://user:pw@example.com/x", "用户名或密码"],
      ["not a url", "地址无效"],
    ] as const) {
      expect(() => checkOutboundUrl(url, false), url).toThrow(message);
    }
    expect(checkOutboundUrl("http://127.0.0.1:8080/x", true).host).toBe("127.0.0.1:8080");
  });

  it("refuses a name that resolves to an internal address, and follows no redirect when allowed", async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(302, { Location: "http://example.com/" });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(postOutbound(`http://localhost:${port}/hook`, "{}", {}, OPTS)).rejects.toBeInstanceOf(
        OutboundRefused,
      );
      expect(hits).toBe(0);
      const answer = await postOutbound(`http://localhost:${port}/hook`, "{}", {}, { ...OPTS, allowPrivate: true });
      expect(answer.status).toBe(302);
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });

  it("gives up on a receiver that never answers, within its time", async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const started = Date.now();
    try {
      await expect(
        postOutbound(`http://127.0.0.1:${port}/`, "{}", {}, { ...OPTS, allowPrivate: true, timeoutMs: 300 }),
      ).rejects.toThrow("连接超时");
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
