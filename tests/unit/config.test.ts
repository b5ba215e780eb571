import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "../../src/server/core/env";
import { parsePasswords } from "../../src/server/session/passwords";
import { normalizeSiteUrl, parseSiteId } from "../../src/server/sites/registry";

const long = (c: string) => c.repeat(32);

describe("parseEnv", () => {
  it("fills the defaults of an empty environment", () => {
    expect(parseEnv({})).toMatchObject({
      DATABASE_URL: "file:./data/dashboard.db",
      SITE_TIMEOUT_MS: 10_000,
      LOGIN_RATE_LIMIT: 20,
      ADMIN_LOGIN_RATE_LIMIT: 5,
      ACCOUNT_READS_PER_MINUTE: 120,
      TRUST_PROXY: [],
    });
  });

  it("never lets the operator's sign-in limit be turned off", () => {
    expect(() => parseEnv({ ADMIN_LOGIN_RATE_LIMIT: "0" })).toThrow(/ADMIN_LOGIN_RATE_LIMIT/);
    expect(parseEnv({ LOGIN_RATE_LIMIT: "0", ADMIN_LOGIN_RATE_LIMIT: "5" })).toMatchObject({
      LOGIN_RATE_LIMIT: 0,
      ADMIN_LOGIN_RATE_LIMIT: 5,
    });
  });

  it("names every bad variable in one message", () => {
    expect(() => parseEnv({ SITE_TIMEOUT_MS: "soon", DATABASE_URL: "mysql://x", TRUST_PROXY: "maybe" })).toThrow(
      /SITE_TIMEOUT_MS[\s\S]*DATABASE_URL|DATABASE_URL[\s\S]*SITE_TIMEOUT_MS/,
    );
    expect(() => parseEnv({ TRUST_PROXY: "maybe" })).toThrow(EnvError);
    expect(() => parseEnv({ TRUST_PROXY: "maybe" })).toThrow(/TRUST_PROXY: "maybe" 不是 IP 地址或网段/);
  });

  it("takes TRUST_PROXY as a list of proxy addresses and CIDR ranges, and refuses the old on/off flag", () => {
    expect(parseEnv({ TRUST_PROXY: " 127.0.0.1, 10.0.0.0/8 ,fd00::/8,::1" }).TRUST_PROXY).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "fd00::/8",
      "::1",
    ]);
    for (const bad of ["1", "true", "10.0.0.0/33", "fd00::/129", "10.0.0.1/8/8", "example.com"]) {
      expect(() => parseEnv({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it("treats an empty variable as unset", () => {
    expect(parseEnv({ SITE_TIMEOUT_MS: "", LOGIN_RATE_LIMIT: "0" })).toMatchObject({
      SITE_TIMEOUT_MS: 10_000,
      LOGIN_RATE_LIMIT: 0,
    });
  });
});

describe("parsePasswords", () => {
  it("takes one password as id 1, or a map of numbered passwords", () => {
    expect(parsePasswords(long("a"))).toEqual({ "1": long("a") });
    expect(parsePasswords(JSON.stringify({ "2": long("b"), "1": long("a") }))).toEqual({
      "1": long("a"),
      "2": long("b"),
    });
  });

  it.each([
    ["short", "至少需要 32 个字符"],
    ['{"a":"x"}', "正整数编号"],
    ["{broken", "不是有效的 JSON"],
    ["{}", "至少需要一个密码"],
    [JSON.stringify({ "1": "short" }), "编号 1 的密码至少需要 32 个字符"],
  ])("refuses %s", (raw, message) => {
    expect(() => parsePasswords(raw)).toThrow(message);
  });
});

describe("site ids and URLs", () => {
  it.each([
    [1, 1],
    ["42", 42],
    [0, null],
    ["0", null],
    [-3, null],
    [2.5, null],
    ["1e3", null],
    [" 7", null],
    [2 ** 31, null],
    [true, null],
  ])("parseSiteId(%j) is %j", (raw, expected) => {
    expect(parseSiteId(raw)).toBe(expected);
  });

  it("normalises http(s) URLs and refuses the rest", () => {
    expect(normalizeSiteUrl(" https://Api.Example.com/ ")).toBe("https://api.example.com");
    expect(normalizeSiteUrl("http://1.2.3.4:3000/sub/")).toBe("http://1.2.3.4:3000/sub");
    for (const bad of [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "example.com",
      "https://u:p@x.com",
      "https://x.com/?a=1",
    ]) {
      expect(() => normalizeSiteUrl(bad)).toThrow();
    }
    // Without its scheme: how to write it.
    expect(() => normalizeSiteUrl("127.0.0.1:3095/")).toThrow(
      "站点地址要以 http:// 或 https:// 开头，如 https://127.0.0.1:3095",
    );
    expect(() => normalizeSiteUrl("api.example.com")).toThrow(
      "站点地址要以 http:// 或 https:// 开头，如 https://api.example.com",
    );
  });
});
