import type Database from "better-sqlite3";
import { driverOf, openSqliteReader, type Db } from "../db/client";
import type { Site } from "../sites/registry";

/**
 * The one read every authenticated request makes: a session by primary key, with its site from
 * the registry, in a single prepared statement. It skips Prisma's query layer, which costs more
 * than the rest of a request (docs/benchmarks.md); everything else goes through Prisma.
 */
export type SessionRow = {
  id: string;
  userId: string;
  siteId: number;
  userInfo: string;
  accessToken: string;
  createdAt: Date;
  expiresAt: Date;
  site: Site | null;
};

type RawRow = {
  id: string;
  user_id: string;
  site_id: number;
  user_info: string;
  access_token: string;
  created_at: string | number | Date;
  expires_at: string | number | Date;
  site_name: string | null;
  site_url: string | null;
};

const SQL = `SELECT s.id, s.user_id, s.site_id, s.user_info, s.access_token, s.created_at, s.expires_at,
  st.name AS site_name, st.url AS site_url
  FROM sessions s LEFT JOIN sites st ON st.id = s.site_id WHERE s.id = `;

const asDate = (v: string | number | Date) => (v instanceof Date ? v : new Date(v));

function fromRaw(r: RawRow | undefined): SessionRow | null {
  if (!r) return null;
  return {
    id: r.id,
    userId: r.user_id,
    siteId: r.site_id,
    userInfo: r.user_info,
    accessToken: r.access_token,
    createdAt: asDate(r.created_at),
    expiresAt: asDate(r.expires_at),
    site: r.site_name !== null && r.site_url !== null ? { id: r.site_id, name: r.site_name, url: r.site_url } : null,
  };
}

export type SessionLookup = (id: string) => Promise<SessionRow | null>;

const lookups = new WeakMap<Db, SessionLookup>();

function createLookup(db: Db): SessionLookup {
  const driver = driverOf(db);
  if (driver.kind === "postgres") {
    const query = { name: "gd-session-by-id", text: `${SQL}$1` };
    return async (id) => fromRaw((await driver.pool.query<RawRow>({ ...query, values: [id] })).rows[0]);
  }
  let statement: Database.Statement<[string], RawRow> | undefined;
  return (id) => {
    statement ??= openSqliteReader(driver).prepare<[string], RawRow>(`${SQL}?`);
    return Promise.resolve(fromRaw(statement.get(id)));
  };
}

export function sessionLookup(db: Db): SessionLookup {
  let lookup = lookups.get(db);
  if (!lookup) {
    lookup = createLookup(db);
    lookups.set(db, lookup);
  }
  return lookup;
}
