/**
 * The claim of due rows on PostgreSQL (docs/design.md 28), one statement for every queue kept as a
 * due column: up to $3 rows of `table` due at $2 (`due` ≤ $2, and `where` when given), the
 * earliest first, are held until $1 (their due time set to it) and returned (`key` and `extra`
 * columns); rows another instance's claim holds are skipped (`FOR UPDATE SKIP LOCKED`), so two
 * instances never claim one row.
 */
export function pgClaim(q: { table: string; key: string[]; due: string; where?: string; extra?: string[] }): string {
  const name = (c: string) => `"${c}"`;
  const keys = q.key.map(name).join(", ");
  const match = q.key.map((k) => `t.${name(k)} = c.${name(k)}`).join(" AND ");
  const returning = [...q.key, ...(q.extra ?? [])].map((c) => `t.${name(c)}`).join(", ");
  return `UPDATE ${name(q.table)} AS t SET ${name(q.due)} = $1::timestamp
FROM (SELECT ${keys} FROM ${name(q.table)} WHERE ${q.where ? `${q.where} AND ` : ""}${name(q.due)} <= $2::timestamp
      ORDER BY ${name(q.due)} LIMIT $3 FOR UPDATE SKIP LOCKED) AS c
WHERE ${match}
RETURNING ${returning}`;
}
