import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The layers of design.md "Shape", one way down:
 *   app/ → http/ (adapters) → api/ (routers) → auth/, accounts/ → session/ → sites/ (domain) → gateway/, db/ → core/ → net/
 *   jobs/ (background work, started by the server entry) → domain
 *   admin/ (the operator, beside the accounts) → session/ (it ends the sessions of a moved site), sites/ and below
 * Each folder of src/server names the folders it must never import; crossing one fails lint.
 */
const SERVER = ["net", "core", "db", "gateway", "sites", "session", "auth", "accounts", "admin", "jobs", "api", "http"];
const DOMAIN = ["sites", "session", "auth", "accounts", "admin"];
const forbidden = {
  net: SERVER.filter((f) => f !== "net"),
  core: SERVER.filter((f) => f !== "core" && f !== "net"),
  db: [...DOMAIN, "gateway", "jobs", "api", "http"],
  gateway: [...DOMAIN, "db", "jobs", "api", "http"],
  sites: ["session", "auth", "accounts", "admin", "jobs", "api", "http"],
  session: ["auth", "accounts", "admin", "jobs", "api", "http", "gateway"],
  auth: ["accounts", "admin", "jobs", "api", "http"],
  accounts: ["auth", "admin", "jobs", "api", "http"],
  admin: ["auth", "accounts", "jobs", "api", "http"],
  jobs: ["api", "http"],
  api: ["http", "jobs"],
  http: ["jobs"],
};

/** Matches an import of one of `folders` inside src/server, however the path is written. */
function importOf(folders) {
  const names = folders.join("|");
  return `^(?:(?:\\.\\./)+|(?:@/)?src/server/|.*/src/server/)(?:${names})(?:/|$)`;
}

const layerRules = Object.entries(forbidden).map(([folder, banned]) => ({
  files: [`src/server/${folder}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            regex: importOf(banned),
            message: `src/server/${folder} must not import ${banned.join(", ")} (design.md "Shape": dependencies run one way).`,
          },
        ],
      },
    ],
  },
}));

/** Components and the browser client see the server only through the router's inferred types. */
const uiRules = {
  files: ["src/components/**/*.{ts,tsx}", "app/**/*.tsx"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            regex: "^(?:(?:\\.\\./)+|@/)src/server/",
            message: "Pages and components use src/trpc (RouterOutputs, the clients), never src/server directly.",
          },
        ],
      },
    ],
  },
};

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".next/",
      "src/generated/",
      "next-env.d.ts",
      "test-results/",
      "playwright-report/",
      "artifacts/",
      "data/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  ...layerRules,
  uiRules,
  {
    files: ["**/*.mjs", "**/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
