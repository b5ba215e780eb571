import { describe, expect, it } from "vitest";
import { SiteBusy } from "../../src/server/gateway/gate";
import { SiteDataError } from "../../src/server/site-data/site-data";

type Gate = typeof import("../../src/server/gateway/gate");
type SiteData = typeof import("../../src/server/site-data/calls");

/** A second copy of a module (the query makes it another module to the loader). */
const secondCopy = <T>(path: string): Promise<T> => import(`${path}?another-copy`) as Promise<T>;

/**
 * The server's bundles each hold a copy of a module, and one process state serves them all: an
 * error made by one copy (a gate's waiter failed by the copy that started the gate, a shared read)
 * must still be recognised by another.
 */
describe("errors made by another copy of their module", () => {
  it("are recognised by instanceof, and nothing else is", async () => {
    const copy = await secondCopy<Gate>("../../src/server/gateway/gate");
    expect(copy.SiteBusy).not.toBe(SiteBusy);
    expect(new copy.SiteBusy(1000)).toBeInstanceOf(SiteBusy);
    expect(new SiteBusy(1000)).toBeInstanceOf(copy.SiteBusy);
    expect(new Error("site busy")).not.toBeInstanceOf(SiteBusy);
    expect(null).not.toBeInstanceOf(SiteBusy);

    const data = await secondCopy<SiteData>("../../src/server/site-data/calls");
    expect(data.SiteDataError).not.toBe(SiteDataError);
    const foreign = new data.SiteDataError("站点繁忙，请稍后再试", "busy");
    expect(foreign).toBeInstanceOf(SiteDataError);
    expect(foreign.kind).toBe("busy");
    expect(new SiteBusy(0)).not.toBeInstanceOf(SiteDataError);
  });
});
