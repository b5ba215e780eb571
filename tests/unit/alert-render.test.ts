import { describe, expect, it } from "vitest";
import { renderMarkdown, renderText } from "../../src/server/alerts/render";

/** An alert's message tells its times in the workspace's zone, named; UTC only for one queued without a zone. */
describe("an alert's times", () => {
  const opened = {
    event: "opened" as const,
    at: "2026-11-24T18:05:00.000Z",
    alert: { id: 7, message: "站点已 30 分钟无法访问", openedAt: "2026-11-24T18:02:00.000Z", resolvedAt: null },
    rule: { kind: "site_down", threshold: 30 },
    account: { name: "主力号", site: "演示站点", userId: 1 },
  };

  it("are in the workspace's zone", () => {
    const text = renderText({ ...opened, timeZone: "Asia/Shanghai" });
    expect(text).toContain("开始于 2026-11-25 02:02（Asia/Shanghai）");
    expect(text).not.toContain("UTC");
    const resolved = renderMarkdown({ ...opened, event: "resolved", timeZone: "America/New_York" });
    expect(resolved).toContain("恢复于 2026-11-24 13:05（America/New\\_York）");
    const test = renderText({ event: "test", at: "2026-11-24T18:02:00.000Z", timeZone: "Asia/Shanghai" });
    expect(test).toContain("时间：2026-11-25 02:02（Asia/Shanghai）");
  });

  it("say UTC when the message carries no zone", () => {
    expect(renderText(opened)).toContain("开始于 2026-11-24 18:02 UTC");
  });
});
