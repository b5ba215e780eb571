/**
 * The simulation's sites, in their own process: SIM_SITES new-api stand-ins behind one port, each
 * at `/s/<n>` (the client joins a site's address and a route, so a path prefix is a site of its
 * own), each with SIM_USERS_PER_SITE users who all take one access token (the one the sessions
 * of the simulation hold) and whose logs a generator makes: SIM_ENTRIES_PER_DAY entries a day over
 * the last two days, the same for the same user every time. Prints `{"url","token"}` once it
 * listens; on a line `report` on its stdin, prints every site's busiest 60 s and the requests
 * answered; stops when its parent's pipe closes.
 */
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import type { AddressInfo } from "node:net";
import { newApiUser, type GatewayUser, type StandInLog } from "../src/demo/gateway";
import { ok, send } from "../src/demo/stand-in/answer";
import { logsAnswer, statAnswer } from "../src/demo/stand-in/logs";
import { statusData } from "../src/demo/stand-in/status";

const SITES = Number(process.env.SIM_SITES || 10_000);
const USERS = Number(process.env.SIM_USERS_PER_SITE || 100);
const PER_DAY = Number(process.env.SIM_ENTRIES_PER_DAY || 12);
export const SIM_TOKEN = "sim-access-token-0123456789abcdef";
const MODELS = ["gpt-4o-mini", "claude-sonnet-4", "deepseek-chat"];

/** Users made as they are asked for, the most recent kept (a site's users are made again alike). */
const made = new Map<string, GatewayUser>();
function userOf(site: number, id: number): GatewayUser {
  const key = `${site}:${id}`;
  let user = made.get(key);
  if (user) return user;
  const now = Math.floor(Date.now() / 1000);
  const first = now - 2 * 86_400;
  const logs: StandInLog[] = Array.from({ length: 2 * PER_DAY }, (_, i) => ({
    createdAt: first + Math.floor(((i + ((site * 7 + id) % 5) / 5) * 86_400) / PER_DAY),
    type: 2,
    model: MODELS[(site + id + i) % MODELS.length] as string,
    tokenName: "默认",
    tokenId: 1,
    quota: 1000 + ((site * 31 + id * 17 + i * 13) % 9000),
    promptTokens: 800 + (i % 7) * 100,
    completionTokens: 200 + (i % 5) * 50,
    durationMs: 900,
    stream: true,
    content: "",
  }));
  user = {
    accessToken: SIM_TOKEN,
    data: newApiUser(id, { username: `u${site}-${id}`, quota: 50_000_000 + site * 1000 + id }),
    logs,
  };
  made.set(key, user);
  if (made.size > 20_000) made.delete(made.keys().next().value as string);
  return user;
}

/** Each site's request times (ms), for its busiest 60 s. */
const arrivals = new Map<number, number[]>();
let answered = 0;

function busiest(times: number[]): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while ((times[to] ?? 0) - (times[from] ?? 0) >= 60_000) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://sim");
  const m = /^\/s\/(\d+)(\/.*)$/.exec(url.pathname);
  const site = m ? Number(m[1]) : 0;
  if (!m || site < 1 || site > SITES) return send(res, 404, { success: false, message: "Not Found" });
  const path = m[2] as string;
  const times = arrivals.get(site) ?? [];
  times.push(Date.now());
  arrivals.set(site, times);
  answered++;
  if (path === "/api/status") return ok(res, statusData("new-api", {}));
  const id = Number(req.headers["new-api-user"]);
  const token = (req.headers.authorization ?? "").replace(/^Bearer /i, "");
  if (token !== SIM_TOKEN || !Number.isInteger(id) || id < 1 || id > USERS) {
    return send(res, 401, { success: false, message: "无权进行此操作，access token 无效" });
  }
  const user = userOf(site, id);
  if (path === "/api/user/self") return ok(res, user.data);
  if (path === "/api/log/self") return logsAnswer("new-api", user, url.searchParams, res);
  if (path === "/api/log/self/stat") return statAnswer("new-api", user, url.searchParams, res);
  return send(res, 404, { success: false, message: "Not Found" });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, token: SIM_TOKEN }));
});
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "report") return;
  let most = 0;
  let busiestSite = 0;
  for (const [site, times] of arrivals) {
    const b = busiest(times);
    if (b > most) [most, busiestSite] = [b, site];
  }
  console.log(JSON.stringify({ answered, sitesAsked: arrivals.size, busiest: most, busiestSite }));
});
process.stdin.on("end", () => server.close(() => process.exit(0)));
