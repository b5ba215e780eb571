import { afterEach, beforeEach } from "vitest";
import { freshProcessState } from "../../src/server/core/process-state";
import { tempStore, type TempDb } from "./db";
import { demoHistory, demoPricing, MODELS, type History, type HistoryOptions } from "../../src/demo/history";
import { newApiUser, startGateway, type RunningGateway, type StandInFamily } from "../../src/demo/gateway";

export const FAMILY_LIST: StandInFamily[] = ["new-api", "new-api-legacy", "veloera", "one-api", "one-hub", "done-hub"];

export type FamilySite = {
  family: StandInFamily;
  gateway: RunningGateway;
  user: { id: number; token: string; data: Record<string, unknown> };
  history: History;
};

/**
 * One stand-in site of a family with one user and a month of history (different per family). The
 * user object is the family's own shape, as far as this service reads it.
 */
export async function startFamilySite(
  family: StandInFamily,
  index: number,
  extra: Parameters<typeof startGateway>[0] extends infer O ? Partial<O> : never = {},
  historyOptions: HistoryOptions = {},
): Promise<FamilySite> {
  const id = 201 + index;
  const history = demoHistory({ seed: 100 + index, days: 30, callsPerDay: 60, ...historyOptions });
  const token = `family-token-${family}-${"x".repeat(16)}`;
  const data = newApiUser(id, {
    username: `user-${family}`,
    display_name: `${family} 用户`,
    quota: history.totals.quota,
    used_quota: history.totals.usedQuota,
    request_count: history.totals.requestCount,
  });
  const hubLike = family === "one-hub" || family === "done-hub";
  const gateway = await startGateway({
    family,
    users: [
      {
        accessToken: token,
        data,
        logs: history.logs,
        tokens: history.tokens,
        topups: history.topups,
        subscriptions: history.subscription ? [history.subscription] : [],
        models: MODELS.map((m) => m.name),
      },
    ],
    // Each family's own price list (one-api publishes none); the hubs cheaper for Claude.
    pricing: hubLike ? demoPricing("one-hub", { "claude-sonnet-4": 0.8 }) : demoPricing("new-api"),
    ...extra,
  });
  return { family, gateway, user: { id, token, data }, history };
}

/**
 * Each test of the file on a fresh store (handed to `use`), with the site gates and the site-data
 * cache cleared (site ids start at 1 in every store); the family sites pushed onto `sites` close
 * after the test.
 */
export function freshStorePerTest(use: (store: TempDb) => void, sites: FamilySite[]): void {
  let store: TempDb | undefined;
  beforeEach(async () => {
    store = await tempStore();
    use(store);
    freshProcessState();
  });
  afterEach(async () => {
    await Promise.all(sites.splice(0).map((s) => s.gateway.close()));
    await store?.cleanup();
  });
}
