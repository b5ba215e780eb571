import { defineConfig } from "vitest/config";

const skipPostgres = process.env.SKIP_POSTGRES === "1";

/**
 * Automatic ledger syncs add site requests that exact counts would see: tests that want them ask.
 * Sign-ins count against a site's budget: suites that sign in hundreds of times a minute lift it,
 * and the tests of the budget set their own.
 */
const SUITE_ENV = { LEDGER_SYNC_MINUTES: "0", SITE_REQUESTS_PER_MINUTE: "100000" };

export default defineConfig({
  // tsconfig's "@/*": the dashboard's modules import each other so.
  resolve: { alias: { "@/": `${import.meta.dirname}/` } },
  test: {
    setupFiles: ["tests/support/setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: servers started by integration files compete with each other.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "sqlite",
          include: ["tests/unit/**/*.test.ts", "tests/integration/**/*.test.ts"],
          exclude: ["tests/integration/postgres/**"],
          env: { TEST_STORE: "sqlite", ...SUITE_ENV },
        },
      },
      ...(skipPostgres
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: "postgres",
                // The store-independent suites once more on PostgreSQL, plus what only it has.
                include: [
                  "tests/integration/auth-router.test.ts",
                  "tests/integration/rest.test.ts",
                  "tests/integration/hardening.test.ts",
                  "tests/integration/security-http.test.ts",
                  "tests/integration/attacks.test.ts",
                  "tests/integration/site-data.test.ts",
                  "tests/integration/site-gate.test.ts",
                  "tests/integration/accounts.test.ts",
                  "tests/integration/overview.test.ts",
                  "tests/integration/ledger.test.ts",
                  "tests/integration/usage-analytics.test.ts",
                  "tests/integration/charge-verdicts.test.ts",
                  "tests/integration/charge-pass.test.ts",
                  "tests/integration/income.test.ts",
                  "tests/integration/plans.test.ts",
                  "tests/integration/trends.test.ts",
                  "tests/integration/usage-log.test.ts",
                  "tests/integration/actions.test.ts",
                  "tests/integration/exports.test.ts",
                  "tests/integration/workspaces.test.ts",
                  "tests/integration/possession.test.ts",
                  "tests/integration/operator.test.ts",
                  "tests/integration/hostile-sites.test.ts",
                  "tests/integration/site-moves.test.ts",
                  "tests/integration/jobs.test.ts",
                  "tests/integration/alerts.test.ts",
                  "tests/integration/alert-digests.test.ts",
                  "tests/integration/prices.test.ts",
                  "tests/integration/ops.test.ts",
                  "tests/integration/postgres/**/*.test.ts",
                ],
                env: { TEST_STORE: "postgres", ...SUITE_ENV },
              },
            },
          ]),
    ],
  },
});
