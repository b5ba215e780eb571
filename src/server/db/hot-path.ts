import type Database from "better-sqlite3";
import { driverOf, type Db } from "./driver";

/**
 * The statements on the per-request hot path, prepared once on the driver: a session by primary
 * key with its site (every authenticated request), a site by id and the sign-in attempt counters
 * (every login). Prisma's query layer costs more per query than the rest of a request (profiles in
 * docs/benchmarks.md); Prisma keeps the schema, the migrations and every other query.
 */
export type SiteRef = { id: number; name: string; url: string };
/** A site as sign-in needs it: the row, and its own request budget (null: the deployment's). */
/** `origin` is `workspace` for a site a workspace added itself (offered to that workspace only). */
type SiteRecord = SiteRef & { requestsPerMinute: number | null; origin: string };

type SessionRow = {
  id: string;
  userId: string;
  siteId: number;
  /** The site's address at sign-in: the session is bound to it. */
  signedInUrl: string;
  siteUserId: number;
  userInfo: string;
  accessToken: string;
  createdAt: Date;
  expiresAt: Date;
  site: SiteRef | null;
  /** The fingerprint of its access token (null: from before they were kept), and whether that credential ended. */
  credential: string | null;
  credentialEnded: boolean;
};

type HotPath = {
  sessionById(id: string): Promise<SessionRow | null>;
  siteById(id: number): Promise<SiteRecord | null>;
  /** Adds one attempt to a key's counter for the window; returns the new count. */
  chargeAttempt(key: string, windowStart: Date): Promise<number>;
  /** A key's count for the window, charging nothing. */
  attemptCount(key: string, windowStart: Date): Promise<number>;
  /**
   * A sign-in's credential (session/possession.ts accepted): `fingerprint` is the account's from
   * `at`, every other one ends then, and the sessions of any other (or none) are deleted. One
   * transaction (SQLite) or statement (PostgreSQL).
   */
  acceptCredential(siteId: number, siteUserId: number, fingerprint: string, at: Date): Promise<void>;
};

type RawSession = {
  id: string;
  user_id: string;
  site_id: number;
  signed_in_url: string;
  site_user_id: number | string;
  user_info: string;
  access_token: string;
  created_at: string | Date;
  expires_at: string | Date;
  site_name: string | null;
  site_url: string | null;
  credential: string | null;
  credential_ended_at: string | Date | null;
};

const SESSION_SQL = `SELECT s.id, s.user_id, s.site_id, s.site_url AS signed_in_url, s.site_user_id, s.user_info, s.access_token, s.created_at, s.expires_at,
  st.name AS site_name, st.url AS site_url, s.credential, c.ended_at AS credential_ended_at
  FROM sessions s LEFT JOIN sites st ON st.id = s.site_id
  LEFT JOIN account_credentials c ON c.site_id = s.site_id AND c.site_user_id = s.site_user_id AND c.fingerprint = s.credential
  WHERE s.id = `;
const SITE_SQL = 'SELECT id, name, url, requests_per_minute AS "requestsPerMinute", origin FROM sites WHERE id = ';
const SQLITE_CHARGE_SQL = `INSERT INTO login_attempts (key, window_start, count) VALUES (?, ?, 1)
  ON CONFLICT (key, window_start) DO UPDATE SET count = login_attempts.count + 1 RETURNING count`;

const COUNT_SQL = "SELECT count FROM login_attempts WHERE key = ";
const PG_CHARGE_SQL = `INSERT INTO login_attempts (key, window_start, count) VALUES ($1, $2::timestamp, 1)
  ON CONFLICT (key, window_start) DO UPDATE SET count = login_attempts.count + 1 RETURNING count`;

const SQLITE_ACCEPT_SQL = [
  `INSERT INTO account_credentials (site_id, site_user_id, fingerprint, accepted_at, ended_at) VALUES (?, ?, ?, ?, NULL)
    ON CONFLICT (site_id, site_user_id, fingerprint) DO UPDATE SET accepted_at = excluded.accepted_at, ended_at = NULL`,
  `UPDATE account_credentials SET ended_at = ? WHERE site_id = ? AND site_user_id = ? AND fingerprint <> ? AND ended_at IS NULL`,
  `DELETE FROM sessions WHERE site_id = ? AND site_user_id = ? AND (credential IS NULL OR credential <> ?)`,
];
const PG_ACCEPT_SQL = `WITH accepted AS (
    INSERT INTO account_credentials (site_id, site_user_id, fingerprint, accepted_at, ended_at) VALUES ($1, $2, $3, $4::timestamp, NULL)
    ON CONFLICT (site_id, site_user_id, fingerprint) DO UPDATE SET accepted_at = excluded.accepted_at, ended_at = NULL RETURNING 1
  ), ended AS (
    UPDATE account_credentials SET ended_at = $4::timestamp
    WHERE site_id = $1 AND site_user_id = $2 AND fingerprint <> $3 AND ended_at IS NULL RETURNING 1
  )
  DELETE FROM sessions WHERE site_id = $1 AND site_user_id = $2 AND (credential IS NULL OR credential <> $3)`;

const asDate = (v: string | Date) => (v instanceof Date ? v : new Date(v));

function fromRaw(r: RawSession | undefined): SessionRow | null {
  if (!r) return null;
  return {
    id: r.id,
    userId: r.user_id,
    siteId: r.site_id,
    signedInUrl: r.signed_in_url,
    // BIGINT: a string from pg, a number from SQLite; site user ids are safe integers.
    siteUserId: Number(r.site_user_id),
    userInfo: r.user_info,
    accessToken: r.access_token,
    createdAt: asDate(r.created_at),
    expiresAt: asDate(r.expires_at),
    site: r.site_name !== null && r.site_url !== null ? { id: r.site_id, name: r.site_name, url: r.site_url } : null,
    credential: r.credential,
    credentialEnded: r.credential_ended_at !== null,
  };
}

function create(db: Db): HotPath {
  const driver = driverOf(db);
  if (driver.kind === "postgres") {
    const { pool } = driver;
    return {
      async sessionById(id) {
        const res = await pool.query<RawSession>({ name: "gd-session", text: `${SESSION_SQL}$1`, values: [id] });
        return fromRaw(res.rows[0]);
      },
      async siteById(id) {
        const res = await pool.query<SiteRecord>({ name: "gd-site", text: `${SITE_SQL}$1`, values: [id] });
        return res.rows[0] ?? null;
      },
      async chargeAttempt(key, windowStart) {
        // `timestamp` columns hold UTC without zone, as Prisma writes them.
        const at = windowStart.toISOString().replace("Z", "");
        const res = await pool.query<{ count: number }>({ name: "gd-charge", text: PG_CHARGE_SQL, values: [key, at] });
        return res.rows[0]?.count ?? 0;
      },
      async attemptCount(key, windowStart) {
        const at = windowStart.toISOString().replace("Z", "");
        const res = await pool.query<{ count: number }>({
          name: "gd-count",
          text: `${COUNT_SQL}$1 AND window_start = $2::timestamp`,
          values: [key, at],
        });
        return res.rows[0]?.count ?? 0;
      },
      async acceptCredential(siteId, siteUserId, fingerprint, at) {
        const values = [siteId, siteUserId, fingerprint, at.toISOString().replace("Z", "")];
        await pool.query({ name: "gd-accept", text: PG_ACCEPT_SQL, values });
      },
    };
  }
  let statements:
    | {
        session: Database.Statement<[string], RawSession>;
        site: Database.Statement<[number], SiteRecord>;
        charge: Database.Statement<[string, string], { count: number }>;
        count: Database.Statement<[string, string], { count: number }>;
        accept: (siteId: number, siteUserId: number, fingerprint: string, at: string) => void;
      }
    | undefined;
  const prepared = () => {
    if (!statements) {
      const conn = driver.connection();
      statements = {
        session: conn.prepare<[string], RawSession>(`${SESSION_SQL}?`),
        site: conn.prepare<[number], SiteRecord>(`${SITE_SQL}?`),
        charge: conn.prepare<[string, string], { count: number }>(SQLITE_CHARGE_SQL),
        count: conn.prepare<[string, string], { count: number }>(`${COUNT_SQL}? AND window_start = ?`),
        accept: acceptOn(conn),
      };
    }
    return statements;
  };
  return {
    sessionById: (id) => Promise.resolve(fromRaw(prepared().session.get(id))),
    siteById: (id) => Promise.resolve(prepared().site.get(id) ?? null),
    chargeAttempt(key, windowStart) {
      // The text form Prisma's SQLite adapter writes for DateTime, so its comparisons agree.
      const at = windowStart.toISOString().replace("Z", "+00:00");
      return Promise.resolve(prepared().charge.get(key, at)?.count ?? 0);
    },
    attemptCount(key, windowStart) {
      const at = windowStart.toISOString().replace("Z", "+00:00");
      return Promise.resolve(prepared().count.get(key, at)?.count ?? 0);
    },
    acceptCredential(siteId, siteUserId, fingerprint, at) {
      prepared().accept(siteId, siteUserId, fingerprint, at.toISOString().replace("Z", "+00:00"));
      return Promise.resolve();
    },
  };
}

/** SQLite's acceptCredential: three prepared statements in one transaction. */
function acceptOn(conn: Database.Database) {
  const [upsert, end, drop] = SQLITE_ACCEPT_SQL.map((sql) => conn.prepare(sql)) as [
    Database.Statement,
    Database.Statement,
    Database.Statement,
  ];
  return conn.transaction((siteId: number, siteUserId: number, fingerprint: string, at: string) => {
    upsert.run(siteId, siteUserId, fingerprint, at);
    end.run(at, siteId, siteUserId, fingerprint);
    drop.run(siteId, siteUserId, fingerprint);
  });
}

const paths = new WeakMap<Db, HotPath>();

export function hotPath(db: Db): HotPath {
  let path = paths.get(db);
  if (!path) {
    path = create(db);
    paths.set(db, path);
  }
  return path;
}
