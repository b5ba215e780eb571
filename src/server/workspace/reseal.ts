/**
 * Moving sealed secrets to the vault's current key (`npm run sites -- vault-reseal`): the saved
 * access tokens of workspaces. Each row is replaced only if it still holds the value read.
 */
import type { Db } from "../db/client";
import { reseal, sealedWithOlderKey } from "../session/vault";
import { vaultContext } from "./saved-accounts";

/**
 * Seals every saved token again under the vault's newest key (after a key is added, before the
 * old one is removed). Tokens that do not open are left as they are and counted.
 */
export async function resealSavedTokens(db: Db): Promise<{ resealed: number; current: number; unopenable: number }> {
  const counts = { resealed: 0, current: 0, unopenable: 0 };
  let after = 0;
  for (;;) {
    const rows = await db.workspaceAccount.findMany({
      where: { id: { gt: after } },
      select: { id: true, workspaceId: true, siteId: true, siteUserId: true, accessToken: true },
      orderBy: { id: "asc" },
      take: 200,
    });
    if (rows.length === 0) return counts;
    for (const row of rows) {
      after = row.id;
      if (!sealedWithOlderKey(row.accessToken)) {
        counts.current++;
        continue;
      }
      const next = reseal(row.accessToken, vaultContext(row.workspaceId, row.siteId, Number(row.siteUserId)));
      if (next === null) {
        counts.unopenable++;
        continue;
      }
      // Only the value read is replaced: a token changed meanwhile is not overwritten.
      const { count } = await db.workspaceAccount.updateMany({
        where: { id: row.id, accessToken: row.accessToken },
        data: { accessToken: next },
      });
      counts.resealed += count;
    }
  }
}
