import { defineConfig } from "vitest/config";

const skipPostgres = process.env.SKIP_POSTGRES === "1";

export default defineConfig({
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
          // Automatic ledger syncs add site requests that exact counts would see: tests that want them ask.
          env: { TEST_STORE: "sqlite", LEDGER_SYNC_MINUTES: "0" },
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
                  "tests/integration/exports.test.ts",
                  "tests/integration/operator.test.ts",
                  "tests/integration/hostile-sites.test.ts",
                  "tests/integration/site-moves.test.ts",
                  "tests/integration/postgres/**/*.test.ts",
                ],
                env: { TEST_STORE: "postgres", LEDGER_SYNC_MINUTES: "0" },
              },
            },
          ]),
    ],
  },
});
