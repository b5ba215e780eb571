import { describe, expect, it } from "vitest";
import { addressBucket, resolveClientAddress, trustedProxies } from "../../src/server/net/client-address";

describe("resolveClientAddress", () => {
  const proxies = trustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"]);

  it("is the socket's peer when the peer is not a trusted proxy, whatever the header says", () => {
    expect(resolveClientAddress("198.51.100.7", "1.2.3.4", proxies)).toEqual({
      address: "198.51.100.7",
      viaProxy: false,
    });
  });

  it("walks the hops right to left past trusted proxies", () => {
    expect(resolveClientAddress("127.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.5", proxies)).toEqual({
      address: "203.0.113.9",
      viaProxy: true,
    });
    expect(resolveClientAddress("::ffff:127.0.0.1", "2001:db8::1, fd00::2", proxies).address).toBe("2001:db8::1");
  });

  it("stops at the last hop when every hop is a proxy", () => {
    expect(resolveClientAddress("127.0.0.1", "10.0.0.9", proxies).address).toBe("10.0.0.9");
    expect(resolveClientAddress("127.0.0.1", undefined, proxies).address).toBe("127.0.0.1");
  });

  it("trusts nobody with an empty list", () => {
    expect(resolveClientAddress("127.0.0.1", "1.2.3.4", trustedProxies([])).address).toBe("127.0.0.1");
  });
});

describe("addressBucket", () => {
  it("keeps IPv4 addresses and groups IPv6 by /64", () => {
    expect(addressBucket("192.0.2.1")).toBe("192.0.2.1");
    expect(addressBucket("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressBucket("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("2001:db8:1:3::1")).not.toBe(addressBucket("2001:db8:1:2::1"));
  });
});
