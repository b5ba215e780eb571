import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../../src/server/api/root";
import { errorMessage } from "../../src/trpc/answers";
import { tempStore, type TempDb } from "../support/db";
import { freePort, startApp, type RunningApp } from "../support/server";

/**
 * What the dashboard says of a failed call, over the real client and server: what the server
 * said, also when it answered outside tRPC's envelope (a body refused before tRPC read it);
 * "网络异常" only when nothing answered.
 */
let store: TempDb;
let app: RunningApp;
beforeAll(async () => {
  store = await tempStore();
  app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await store?.cleanup();
});

const client = (url: string) => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${url}/api/trpc` })] });
const failure = (call: Promise<unknown>) =>
  call.then(
    () => "answered",
    (error: unknown) => errorMessage(error),
  );

describe("a failed call in words", () => {
  it("says the server's 413 for a 200 KB paste, not a network failure", async () => {
    const said = await failure(
      client(app.url).auth.login.mutate({ siteId: 1, userId: 1, accessToken: "x".repeat(200 * 1024) }),
    );
    expect(said).toBe("请求体过大");
  });

  it("says the procedure's own refusal", async () => {
    const said = await failure(client(app.url).usage.summary.query({ groupBy: "day" } as never));
    expect(said).toBe("未登录或登录已过期");
  });

  it("says 网络异常 only when nothing answered", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect(await failure(client(closed).ops.health.query())).toBe("网络异常，请检查连接后重试");
  });
});
