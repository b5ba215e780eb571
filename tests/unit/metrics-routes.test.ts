import { describe, expect, it } from "vitest";
import { methodOf, routeOf, setRoutePatterns } from "../../src/server/core/metrics";

describe("the metrics' labels", () => {
  setRoutePatterns([
    // The REST dispatcher's own pattern, first: a declared endpoint's pattern still wins.
    "/api/[...route]",
    "/",
    "/workspace",
    "/api/auth/me",
    "/api/site/[...path]",
    "/api/workspace/accounts/[id]",
    "/api/workspace/accounts/[id]/ledger",
    "/api/prices/table.csv",
  ]);

  it("names a request by the route it reaches, and anything else `other`", () => {
    expect(routeOf("/api/auth/me?x=1")).toBe("/api/auth/me");
    expect(routeOf("/api/site/token/")).toBe("/api/site/[...path]");
    expect(routeOf("/api/site/a/b/c/d/e/f")).toBe("/api/site/[...path]");
    expect(routeOf("/api/workspace/accounts/12")).toBe("/api/workspace/accounts/[id]");
    expect(routeOf("/api/workspace/accounts/12/ledger")).toBe("/api/workspace/accounts/[id]/ledger");
    expect(routeOf("/api/prices/table.csv")).toBe("/api/prices/table.csv");
    expect(routeOf("/")).toBe("/");
    expect(routeOf("/_next/static/chunks/x.js")).toBe("/_next");
    expect(routeOf("/api/nothing/here")).toBe("/api/[...route]");
    expect(routeOf("/nothing/here")).toBe("other");
    expect(routeOf(`/${"a/".repeat(40)}`)).toBe("other");
  });

  it("keeps HTTP's methods and calls the rest `other`", () => {
    expect(methodOf("PATCH")).toBe("PATCH");
    expect(methodOf("BREW")).toBe("other");
    expect(methodOf(undefined)).toBe("other");
  });
});
