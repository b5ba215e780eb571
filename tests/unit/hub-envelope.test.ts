import { describe, expect, it } from "vitest";
import { envelopeOf, openEnvelope, sealEnvelope } from "../../src/server/hub/envelope";

/**
 * All API Hub's encrypted sync file (docs/design.md 26): PBKDF2-SHA-256 and AES-256-GCM, checked
 * against a vector the extension's own code opens.
 */
const VECTOR =
  '{"type":"all-api-hub-webdav-backup-encrypted","v":1,"kdf":"PBKDF2","cipher":"AES-GCM","iter":250000,' +
  '"salt":"AAECAwQFBgcICQoLDA0ODw==","iv":"AAECAwQFBgcICQoL",' +
  '"ct":"3mi4nxCE3R08Zim5C0iIfEj4efMau+YECVmZrrrtVCTp2s9SS1QCXcUXethziq7cq83f4earR+CFPtM="}';

describe("the sync file's envelope", () => {
  it("opens the extension's test vector with its passphrase, trimmed as the extension trims it", async () => {
    const envelope = envelopeOf(VECTOR)!;
    expect(await openEnvelope(envelope, "correct horse")).toBe('{"version":"4.0","timestamp":1767225600000}');
    expect(await openEnvelope(envelope, "  correct horse \n")).toBe('{"version":"4.0","timestamp":1767225600000}');
    expect(await openEnvelope(envelope, "correct horsE")).toBeNull();
  });

  it("is recognised exactly as the extension recognises it", () => {
    expect(envelopeOf(VECTOR.replace('"v":1', '"v":"1"'))).toBeNull();
    expect(envelopeOf(VECTOR.replace('"iter":250000', '"iter":"250000"'))).toBeNull();
    expect(envelopeOf('{"version":"4.0"}')).toBeNull();
    expect(envelopeOf("not json")).toBeNull();
    expect(envelopeOf(VECTOR.replace("}", ',"extra":true}'))).not.toBeNull();
  });

  it("seals with a fresh salt and IV each time, compact, and opens again", async () => {
    const a = await sealEnvelope("{}", "pass", { iter: 1000 });
    const b = await sealEnvelope("{}", "pass", { iter: 1000, holder: "workspace 1" });
    expect(a).not.toBe(b);
    expect(a).not.toContain("\n");
    expect(JSON.parse(a)).toMatchObject({ type: "all-api-hub-webdav-backup-encrypted", v: 1, iter: 1000 });
    expect(await openEnvelope(envelopeOf(a)!, "pass")).toBe("{}");
    // A tampered text does not open.
    const e = envelopeOf(a)!;
    const ct = Buffer.from(e.ct, "base64");
    ct[0] = (ct[0] as number) ^ 1;
    expect(await openEnvelope({ ...e, ct: ct.toString("base64") }, "pass")).toBeNull();
    // An iteration count past the extension's own is refused before any work.
    expect(await openEnvelope({ ...e, iter: 50_000_000 }, "pass")).toBeNull();
    expect(await openEnvelope({ ...e, iter: 250_001 }, "pass")).toBeNull();
  });

  it("derives one key at a time per holder, and two at most in the process", async () => {
    const sealed = envelopeOf(await sealEnvelope("{}", "pass", { iter: 20_000 }))!;
    const order: string[] = [];
    const one = (holder: string, name: string) =>
      openEnvelope(sealed, "pass", holder).then((text) => {
        order.push(name);
        return text;
      });
    // The first holder's three queue one after another; another holder's goes beside them.
    const all = await Promise.all([one("a", "a1"), one("a", "a2"), one("a", "a3"), one("b", "b1")]);
    expect(all).toEqual(["{}", "{}", "{}", "{}"]);
    expect(order.filter((n) => n.startsWith("a"))).toEqual(["a1", "a2", "a3"]);
    expect(order.indexOf("b1")).toBeLessThan(order.indexOf("a3"));
  });
});
