/**
 * The verifying pass's sums added to their tables in a few statements (Prisma has no bulk upsert):
 * a multi-row INSERT whose conflict on the key adds the new figures to the kept ones. The same SQL
 * on both stores but for the placeholders; an INSERT's parameters take their columns' types.
 */
import type { Db } from "../db/client";

/** Rows per statement: well inside both drivers' parameter limits. */
const ROWS_PER_STATEMENT = 500;

/**
 * Adds `rows` (values in `columns`' order) to `table`: the first `keys` columns are its key, the
 * rest are summed.
 */
export async function addUp(
  tx: Pick<Db, "$executeRawUnsafe">,
  table: string,
  columns: readonly string[],
  keys: number,
  rows: unknown[][],
  postgres: boolean,
): Promise<void> {
  const sums = columns.slice(keys);
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const values: unknown[] = [];
    const tuples = rows.slice(i, i + ROWS_PER_STATEMENT).map((row) => {
      const marks = row.map((v) => {
        values.push(v);
        return postgres ? `$${values.length}` : "?";
      });
      return `(${marks.join(", ")})`;
    });
    await tx.$executeRawUnsafe(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}
       ON CONFLICT (${columns.slice(0, keys).join(", ")}) DO UPDATE SET
       ${sums.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", ")}`,
      ...values,
    );
  }
}
