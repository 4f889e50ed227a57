import { describe, expect, test } from "bun:test";
import { randomSecret, safeEqual, SecretBox, sha256Hex } from "../../src/core/crypto";

const box = new SecretBox("a".repeat(48));

describe("SecretBox (AES-256-GCM under HKDF-derived keys)", () => {
  test("seal/open round-trips, and the same plaintext seals differently each time", () => {
    const a = box.seal("bucket-variables", "hunter2 ✓", "bkt_1:API_TOKEN");
    const b = box.seal("bucket-variables", "hunter2 ✓", "bkt_1:API_TOKEN");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain("hunter2");
    expect(box.open("bucket-variables", a, "bkt_1:API_TOKEN")).toBe("hunter2 ✓");
    expect(box.open("bucket-variables", box.seal("bucket-variables", ""), "")).toBe("");
  });

  test("a value cannot be opened under another owner, purpose or master key, or after tampering", () => {
    const sealed = box.seal("bucket-variables", "secret", "bkt_1");
    expect(() => box.open("bucket-variables", sealed, "bkt_2")).toThrow();
    expect(() => box.open("form-submissions", sealed, "bkt_1")).toThrow();
    expect(() => new SecretBox("b".repeat(48)).open("bucket-variables", sealed, "bkt_1")).toThrow();
    const [v, iv, tag, ct] = sealed.split(".");
    const flipped = ct!.slice(0, -1) + (ct!.endsWith("A") ? "B" : "A");
    expect(() => box.open("bucket-variables", [v, iv, tag, flipped].join("."), "bkt_1")).toThrow();
    expect(() => box.open("bucket-variables", "garbage", "bkt_1")).toThrow("unrecognised sealed value");
  });

  test("purpose keys are distinct and stable", () => {
    expect(box.key("csrf").equals(box.key("storage-url"))).toBe(false);
    expect(box.key("csrf").equals(new SecretBox("a".repeat(48)).key("csrf"))).toBe(true);
    expect(box.key("csrf").length).toBe(32);
  });

  test("sign/verify: HMAC bound to purpose and data", () => {
    const sig = box.sign("storage-url", "PUT /_storage/x?size=3");
    expect(box.verify("storage-url", "PUT /_storage/x?size=3", sig)).toBe(true);
    expect(box.verify("storage-url", "PUT /_storage/x?size=4", sig)).toBe(false);
    expect(box.verify("site-cookie", "PUT /_storage/x?size=3", sig)).toBe(false);
    expect(box.verify("storage-url", "PUT /_storage/x?size=3", sig.slice(1))).toBe(false);
  });

  test("a master key shorter than 32 characters is refused", () => {
    expect(() => new SecretBox("short")).toThrow();
  });
});

describe("helpers", () => {
  test("sha256Hex, safeEqual and randomSecret", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
    const s = randomSecret(48);
    expect(s).toMatch(/^[\w-]{64}$/);
    expect(randomSecret(48)).not.toBe(s);
  });
});
