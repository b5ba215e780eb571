import type { IncomingMessage, ServerResponse } from "node:http";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";

/**
 * Access tokens that make the stand-in misbehave the way real sites and networks do.
 * Anything else goes through the gateway.md contract.
 */
export const FAULT = {
  hang: "fault-hang",
  html: "fault-html",
  noData: "fault-no-data",
  nullJson: "fault-null-json",
  noMessage: "fault-no-message",
  dbError: "fault-db-error",
  huge: "fault-huge",
  drip: "fault-drip",
  reset: "fault-reset",
  redirectLoop: "fault-redirect-loop",
  stringData: "fault-string-data",
  echo: "fault-echo-token",
} as const;

function answerRaw(res: ServerResponse, status: number, text: string): true {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(text);
  return true;
}
const answer = (res: ServerResponse, status: number, body: unknown) => answerRaw(res, status, JSON.stringify(body));

function faultFor(req: IncomingMessage, res: ServerResponse): boolean {
  const token = (req.headers.authorization ?? "").replace(/^Bearer /i, "");
  switch (token) {
    case FAULT.hang:
      return true; // never answers
    case FAULT.html:
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end("<!doctype html><html><body>Welcome to nginx!</body></html>");
      return true;
    case FAULT.noData:
      return answer(res, 200, { success: true, message: "" });
    case FAULT.nullJson:
      return answerRaw(res, 200, "null");
    case FAULT.noMessage:
      return answer(res, 200, { success: false });
    case FAULT.dbError:
      return answer(res, 500, { success: false, message: "数据库出错，请联系管理员" });
    case FAULT.echo:
      return answer(res, 200, { success: false, message: `无权进行此操作，令牌 ${token} 无效` });
    case FAULT.stringData:
      return answer(res, 200, { success: true, message: "", data: "oops" });
    case FAULT.huge: {
      // 64 MB of JSON-looking bytes, without Content-Length, as fast as the socket takes them.
      res.writeHead(200, { "Content-Type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 1024) {
          sent++;
          if (!res.write(chunk)) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      res.write('{"success":true,"data":{"id":1,"pad":"');
      pump();
      return true;
    }
    case FAULT.drip: {
      // One byte every 200 ms: each read makes progress, the whole answer never completes in time.
      res.writeHead(200, { "Content-Type": "application/json" });
      const timer = setInterval(() => res.write(" "), 200);
      res.on("close", () => clearInterval(timer));
      return true;
    }
    case FAULT.reset:
      req.socket.destroy();
      return true;
    case FAULT.redirectLoop:
      res.writeHead(302, { Location: "/api/user/self" });
      res.end();
      return true;
    default:
      return false;
  }
}

export const ALICE = {
  id: 101,
  token: "sk-alice-0123456789abcdef",
  // Older builds leak the whole user row, secrets included.
  data: newApiUser(101, {
    username: "alice",
    display_name: "爱丽丝",
    access_token: "sk-alice-0123456789abcdef",
    password: "",
    original_password: "hunter2",
    verification_code: "123456",
  }),
};
export const BOB = { id: 102, token: "sk-bob-abcdef0123456789", data: newApiUser(102, { username: "bob" }) };
export const BANNED = { id: 103, token: "sk-banned-000", data: newApiUser(103, { status: 2 }) };
/** Signed in by one test only, so it can count her sessions exactly. */
export const CAROL = { id: 104, token: "sk-carol-fedcba9876543210", data: newApiUser(104, { username: "carol" }) };

const users = [ALICE, BOB, BANNED, CAROL].map((u) => ({ accessToken: u.token, data: u.data }));

/** A new-api site of 2025 (requires New-Api-User, failures with HTTP 401). */
export function startStrictGateway(): Promise<RunningGateway> {
  return startGateway({ users, requireUserHeader: true, failureStatus: 401, intercept: faultFor });
}

/** An older one-api style site (no user header, failures with HTTP 200). */
export function startLegacyGateway(): Promise<RunningGateway> {
  return startGateway({ users, failureStatus: 200, intercept: faultFor });
}

/** The most requests that arrived within any 60 s, of these arrival times (ms). */
export function busiestMinute(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let from = 0, to = 0; to < sorted.length; to++) {
    while ((sorted[to] as number) - (sorted[from] as number) >= 60_000) from++;
    peak = Math.max(peak, to - from + 1);
  }
  return peak;
}
