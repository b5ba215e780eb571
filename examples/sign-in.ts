/**
 * Signs in, reads the session and signs out against a running service, with the typed client.
 *
 *   npm run demo                       # in one terminal
 *   npx tsx examples/sign-in.ts        # in another: uses the demo site and credentials
 *
 * Against another service or account: DASHBOARD_URL, SITE_ID, USER_ID, ACCESS_TOKEN.
 */
import { createDashboardClient, isUnauthorized } from "../src/client";

const baseUrl = process.env.DASHBOARD_URL ?? "http://127.0.0.1:3000";
const client = createDashboardClient({ baseUrl });

const sites = await client.sites();
const site = process.env.SITE_ID
  ? sites.find((s) => String(s.id) === process.env.SITE_ID)
  : sites.find((s) => s.name === "演示站点");
if (!site) {
  console.error(`找不到站点（已注册: ${sites.map((s) => `${s.id} ${s.name}`).join(", ") || "无"}）`);
  process.exit(1);
}

const login = await client.login({
  siteId: site.id,
  userId: Number(process.env.USER_ID ?? 1),
  accessToken: process.env.ACCESS_TOKEN ?? "demo-access-token-0123456789",
});
if (!login.success) {
  console.error(`登录失败: ${login.message}`);
  process.exit(1);
}
console.log(`已登录 ${site.name}，用户 ${login.data.userInfo.id}`);

const me = await client.me();
const info = me.data.userInfo;
const name = [info.display_name, info.username].find((v) => typeof v === "string") ?? `用户 ${info.id}`;
console.log(`当前用户: ${name}，站点: ${me.data.site?.name ?? "（已移除）"}`);
if (typeof info.quota === "number") console.log(`剩余额度: ${info.quota}（约 $${(info.quota / 500_000).toFixed(2)}）`);

await client.logout();
try {
  await client.me();
  console.error("退出后会话仍然有效");
  process.exit(1);
} catch (error) {
  if (!isUnauthorized(error)) throw error;
  console.log("已退出登录，会话已失效");
}
