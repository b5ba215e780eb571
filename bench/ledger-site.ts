/**
 * A new-api stand-in in its own process for the ledger benchmark: one user whose log holds
 * BENCH_ENTRIES entries (default 1,000,000) evenly over BENCH_DAYS days ending now, and a second
 * user with none (`other`, for live load beside it). Prints `{"url","token","id","entries","other"}`
 * on one line once it listens; stops when its parent's pipe closes.
 */
import { newApiUser, startGateway, type StandInLog } from "../src/demo/gateway";

const ENTRIES = Number(process.env.BENCH_ENTRIES || 1_000_000);
const DAYS = Number(process.env.BENCH_DAYS || 30);
const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "deepseek-chat", "gemini-2.5-flash", "o3-mini"];
const TOKENS = ["生产服务器", "笔记本", "手机", "CI 测试"];

const now = Math.floor(Date.now() / 1000) - 60;
const start = now - DAYS * 86_400;
const logs: StandInLog[] = new Array<StandInLog>(ENTRIES);
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
for (let i = 0; i < ENTRIES; i++) {
  const prompt = 200 + Math.floor(rand() * 4000);
  const completion = 50 + Math.floor(rand() * 800);
  logs[i] = {
    createdAt: start + Math.floor((i * DAYS * 86_400) / ENTRIES),
    type: i % 500 === 0 ? 1 : 2,
    model: MODELS[Math.floor(rand() * MODELS.length)] as string,
    tokenName: TOKENS[Math.floor(rand() * TOKENS.length)] as string,
    tokenId: 11,
    quota: Math.floor((prompt + completion * 4) * 0.75),
    promptTokens: prompt,
    completionTokens: completion,
    durationMs: 400 + Math.floor(rand() * 5000),
    stream: rand() < 0.7,
    content: i % 500 === 0 ? "使用在线充值成功" : "",
  };
}
const token = "bench-ledger-token-0123456789abcdef";
const gateway = await startGateway({
  family: "new-api",
  users: [
    { accessToken: token, data: newApiUser(501, { quota: 9_000_000_000 }), logs },
    { accessToken: `${token}-other`, data: newApiUser(502, { quota: 1_000_000 }), logs: [] },
  ],
});
const other = { id: 502, token: `${token}-other` };
console.log(JSON.stringify({ url: gateway.url, token, id: 501, entries: ENTRIES, days: DAYS, other }));
process.stdin.resume();
process.stdin.on("end", () => void gateway.close().then(() => process.exit(0)));
