import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The layers of docs/design.md "Shape", one way down, a folder per capability:
 *   app/ → http/ (adapters) → api/ (routers, wire schemas), jobs/ (background work, started by the
 *   server entry) → backup/ → alerts/ → hub/ → exports/, actions/, prices/ → ledger/ → workspace/ → accounts/, auth/, admin/ → site-data/ → session/
 *   → sites/
 *   → gateway/, db/ → core/ → net/
 * Each folder of src/server names the folders it must never import; crossing one fails lint.
 */
const ORDER = [
  ["net"],
  ["core"],
  ["db", "gateway"],
  ["sites"],
  ["session"],
  ["site-data"],
  ["accounts", "auth", "admin"],
  ["workspace"],
  ["ledger"],
  ["exports", "actions", "prices"],
  ["hub"],
  ["alerts"],
  ["backup"],
  ["jobs", "api"],
  ["http"],
];
const SERVER = ORDER.flat();
const levelOf = (folder) => ORDER.findIndex((level) => level.includes(folder));
/** Everything above a folder, and its siblings on the same level (they stay apart too). */
const forbidden = Object.fromEntries(
  SERVER.map((folder) => [folder, SERVER.filter((f) => f !== folder && levelOf(f) >= levelOf(folder))]),
);
// Two more: the session store never calls a site, and only the server entry starts the jobs.
forbidden.session.push("gateway");
forbidden.http.push("jobs");

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
            message: `src/server/${folder} must not import ${banned.join(", ")} (docs/design.md "Shape": dependencies run one way).`,
          },
        ],
      },
    ],
  },
}));

/**
 * One owner per table: only ledger/ reads or writes the ledger tables, only session/ the sessions,
 * with the accounts' due times of the runner, only admin/ the operator's rows, only workspace/ the workspaces, their sessions, accounts and
 * invites and the run-time settings, only jobs/ the job leases, only actions/ the 操作记录, only alerts/ the alerts
 * and digests, only prices/ the prices, only hub/ the All API Hub sync; the others ask the owner. (Prisma delegates by name, on `db`,
 * `tx` or `….db`.)
 */
const OWNERS = {
  ledger: [
    "ledgerEntry",
    "ledgerHour",
    "ledgerHourTotal",
    "balanceSnapshot",
    "ledgerSync",
    "ledgerArchive",
    "ledgerTopup",
  ],
  session: ["session", "accountCredential", "ledgerDue"],
  admin: ["operator", "operatorSession", "auditEntry"],
  workspace: ["workspace", "workspaceSession", "workspaceAccount", "workspaceInvite", "setting"],
  jobs: ["jobLease"],
  actions: ["accountAction"],
  alerts: ["alertSettings", "alertChannel", "alertRule", "alert", "alertDelivery", "alertDigest", "statementLink"],
  prices: ["sitePrice", "sitePriceChange", "sitePriceRead", "accountPrice"],
  hub: ["hubSync", "hubFile", "hubLink", "hubSyncRun"],
};
const delegate = (names) =>
  `MemberExpression[property.name=/^(${names.join("|")})$/]:matches([object.name=/^(db|tx)$/], [object.property.name="db"], [object.callee.name="db"])`;
/** Every Prisma read and write names the columns it wants back (docs/design.md "Shape"). */
const EXPLICIT_SELECT = {
  selector:
    "CallExpression[callee.property.name=/^(findMany|findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|create|update|upsert|delete)$/]" +
    '[callee.object.type="MemberExpression"]:matches([callee.object.object.name=/^(db|tx)$/], [callee.object.object.property.name="db"])' +
    " > ObjectExpression.arguments:not(:has(> Property[key.name=/^(select|omit)$/]))",
  message: "Select the columns explicitly (select: { … }).",
};
const ownerRules = {
  files: ["src/server/**/*.ts"],
  rules: {
    "no-restricted-syntax": [
      "error",
      EXPLICIT_SELECT,
      ...Object.entries(OWNERS).map(([owner, tables]) => ({
        selector: delegate(tables),
        message: `Only src/server/${owner} reads or writes ${tables.join(", ")}: ask it (docs/design.md "Shape": one owner per table).`,
      })),
    ],
  },
};
/** Each owner may touch its own tables (and no one else's). */
const ownRules = Object.keys(OWNERS).map((owner) => ({
  files: [`src/server/${owner}/**/*.ts`],
  rules: {
    "no-restricted-syntax": [
      "error",
      EXPLICIT_SELECT,
      ...Object.entries(OWNERS)
        .filter(([other]) => other !== owner)
        .map(([other, tables]) => ({
          selector: delegate(tables),
          message: `Only src/server/${other} reads or writes ${tables.join(", ")}: ask it.`,
        })),
    ],
  },
}));

/** A router never imports another router: what two share lives in a domain folder. */
const routerRules = {
  files: ["src/server/api/routers/**/*.ts"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          { regex: "^\\./", message: "A router imports no other router: move what they share to a domain folder." },
          // The layer rule of api/ too: this entry replaces it for the routers.
          { regex: importOf(forbidden.api), message: `src/server/api must not import ${forbidden.api.join(", ")}.` },
        ],
      },
    ],
  },
};

/** What the server and the browser both use stands on its own. */
const sharedRules = {
  files: ["src/shared/**/*.ts"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            regex: "^(?:(?:\\.\\./)+|@/src/)(?:server|components|trpc|client|demo)(?:/|$)",
            message: "src/shared is used by the server and the browser alike: it imports neither.",
          },
        ],
      },
    ],
  },
};

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
  ownerRules,
  ...ownRules,
  routerRules,
  sharedRules,
  uiRules,
  {
    files: ["**/*.mjs", "**/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
