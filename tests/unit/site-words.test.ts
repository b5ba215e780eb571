import { describe, expect, it } from "vitest";
import { siteWords } from "../../src/components/site-words";

describe("a site's message with English in it", () => {
  it("keeps the site's words and says what the English means beside them", () => {
    expect(siteWords("无权进行此操作，access token 无效")).toBe(
      "无权进行此操作，access token 无效（access token 即站点的系统访问令牌：它可能填错、已被重置或失效，请在站点的个人设置中重新生成后再试）",
    );
    expect(siteWords("无权进行此操作，New-Api-User 与登录用户不匹配")).toMatch(
      /（站点要求请求附带令牌所属账户的用户ID/,
    );
    expect(siteWords("user quota is not enough")).toBe("user quota is not enough（quota 即站点的额度）");
  });

  it("leaves a message in Chinese alone", () => {
    expect(siteWords("站点繁忙，请约 20 秒后再试")).toBe("站点繁忙，请约 20 秒后再试");
    expect(siteWords("兑换失败，该兑换码已被使用")).toBe("兑换失败，该兑换码已被使用");
  });
});
