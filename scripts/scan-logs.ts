/**
 * Ends `npm test`: reads every server log the suites kept (artifacts/server-logs) and fails when
 * one holds a session token, a sealed cookie or access token, a test account's access token, a
 * workspace token or a statement link's secret.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const dir = path.resolve("artifacts/server-logs");
const PATTERNS: [string, RegExp][] = [
  ["session token (UUID v4)", /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/i],
  ["sealed value (iron)", /Fe26\.2\*/],
  ["test access token", /sk-(alice|bob|banned)-|demo-access-token|fault-[a-z-]+/],
  ["cookie header", /gd_session=/],
  ["statement link secret", /\/statement\/[A-Za-z0-9_-]{43}/],
  ["workspace token", /gd[wk]_[A-Za-z0-9_-]{43}/],
];

const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".log")) : [];
if (files.length === 0) {
  console.error(`没有可检查的服务器日志: ${dir}`);
  process.exit(1);
}
let leaks = 0;
let lines = 0;
for (const file of files) {
  const text = readFileSync(path.join(dir, file), "utf8");
  lines += text.split("\n").length;
  for (const [what, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (match) {
      leaks++;
      console.error(`${file}: 日志中出现 ${what}`);
    }
  }
}
console.log(`日志检查: ${files.length} 个文件, ${lines} 行, ${leaks === 0 ? "未发现令牌" : `${leaks} 处泄露`}`);
process.exit(leaks === 0 ? 0 : 1);
