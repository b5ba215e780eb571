import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hubStore, resealHubSync } from "../../src/server/hub/store";
import { setVaultKeys } from "../../src/server/session/vault";
import { tempStore, type TempDb } from "../support/db";

/**
 * What the All API Hub sync keeps (docs/design.md 26): the extension's file, its passphrase and
 * its temporary copies sealed at rest, byte for byte as sent, moved to a new vault key by
 * vault-reseal; a workspace holds a few copies at most.
 */
let store: TempDb;
beforeAll(async () => {
  store = await tempStore();
});
afterAll(async () => {
  await store?.cleanup();
});

describe("the sync's store", () => {
  it("keeps every secret sealed, gives bytes back exactly, and reseals them under a new key", async () => {
    const k1 = "vault-key-one-0123456789abcdefghijklmnop";
    const k2 = "vault-key-two-0123456789abcdefghijklmnop";
    setVaultKeys(JSON.stringify({ "1": k1 }));
    try {
      const hub = hubStore(store.db);
      const now = new Date();
      await hub.setSettings(7, { passphrase: "correct horse" });
      await hub.setFile(
        7,
        { text: '{"accounts":{"accounts":[{"account_info":{"access_token":"sk-secret-file"}}]}}', encrypted: true },
        now,
      );
      // Bytes that are not UTF-8 come back as they went.
      const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0xff, 0x00, 0x7d]);
      expect(await hub.putTemp(7, "all-api-hub-1-0.json.tmp.20261127T000000Z.abc", bytes, now)).toEqual({
        created: true,
      });
      const rows = JSON.stringify([
        await store.db.hubSync.findMany({ select: { file: true, passphrase: true } }),
        await store.db.hubFile.findMany({ select: { body: true } }),
      ]);
      expect(rows).not.toContain("sk-secret-file");
      expect(rows).not.toContain("correct horse");
      expect(rows.match(/v1\.k1\./g)).toHaveLength(3);

      setVaultKeys(JSON.stringify({ "1": k1, "2": k2 }));
      expect(await resealHubSync(store.db)).toEqual({ resealed: 3, current: 0, unopenable: 0 });
      setVaultKeys(JSON.stringify({ "2": k2 }));
      expect((await hub.settings(7)).passphrase).toBe("correct horse");
      expect((await hub.file(7))?.text).toContain("sk-secret-file");
      expect((await hub.temp(7, "all-api-hub-1-0.json.tmp.20261127T000000Z.abc"))?.equals(bytes)).toBe(true);
    } finally {
      setVaultKeys(undefined);
    }
  });

  it("holds a few temporary copies per workspace, and forgets those a day old", async () => {
    const hub = hubStore(store.db);
    const now = new Date();
    for (let i = 0; i < 8; i++) expect(await hub.putTemp(8, `copy-${i}`, Buffer.from("{}"), now)).not.toBeNull();
    expect(await hub.putTemp(8, "one-too-many", Buffer.from("{}"), now)).toBeNull();
    // Writing one it holds already is fine.
    expect(await hub.putTemp(8, "copy-0", Buffer.from("[]"), now)).toEqual({ created: false });
    // A day later the old copies are gone before the limit is counted.
    expect(await hub.putTemp(8, "next-day", Buffer.from("{}"), new Date(now.getTime() + 25 * 3_600_000))).toEqual({
      created: true,
    });
    expect((await hub.temps(8)).map((t) => t.name)).toEqual(["next-day"]);
  });
});
