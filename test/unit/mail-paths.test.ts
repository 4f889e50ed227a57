import { describe, expect, test } from "bun:test";
import { attachmentPath, messageFolder, MAX_ATTACHMENT_NAME_BYTES, safeAttachmentName, uniqueNamer } from "../../src/features/mail/paths";

describe("message folder naming", () => {
  test("_email/YYYY/MM/DD/<UTC stamp>-<id>/", () => {
    const f = messageFolder(new Date("2026-11-22T03:15:00.123Z"), "k3j9x0a1b2c3d4e5");
    expect(f).toBe("_email/2026/11/22/20261122T031500123Z-k3j9x0a1b2c3d4e5/");
    expect(attachmentPath(f, "a.pdf")).toBe(f + "attachments/a.pdf");
  });

  test("names sort in arrival order", () => {
    const times = ["2026-01-02T00:00:00.000Z", "2026-01-01T23:59:59.999Z", "2026-01-01T09:00:00.001Z", "2025-12-31T23:00:00.000Z", "2026-01-01T09:00:00.000Z"];
    const names = times.map((t, i) => messageFolder(new Date(t), `zzzzzzz${i}`));
    const byTime = [...names].sort((a, b) => times[names.indexOf(a)]!.localeCompare(times[names.indexOf(b)]!));
    expect([...names].sort()).toEqual(byTime);
  });

  test("refuses an id that could escape the folder", () => {
    expect(() => messageFolder(new Date(), "../../etc")).toThrow();
  });
});

describe("attachment names", () => {
  const cases: [string | undefined, string][] = [
    ["report.pdf", "report.pdf"],
    ["../../etc/passwd", "passwd"],
    ["..\\..\\windows\\system32\\evil.dll", "evil.dll"],
    ["/absolute/path.txt", "path.txt"],
    ["..", "attachment"],
    [".htaccess", "htaccess"],
    ["...hidden", "hidden"],
    ["bad\u0000name\r\n.txt", "badname.txt"],
    ["invoice\u202Efdp.exe", "invoicefdp.exe"],
    ['a<b>c:d"e|f?g*.txt', "a_b_c_d_e_f_g_.txt"],
    ["CON.txt", "_CON.txt"],
    ["   ", "attachment"],
    [undefined, "attachment"],
    ["tab\there.txt", "tabhere.txt"],
  ];
  for (const [raw, want] of cases) test(JSON.stringify(raw) + " -> " + want, () => expect(safeAttachmentName(raw)).toBe(want));

  test("long names are cut to the byte limit keeping the extension, without splitting characters", () => {
    const n = safeAttachmentName("ü".repeat(300) + ".pdf");
    expect(Buffer.byteLength(n)).toBeLessThanOrEqual(MAX_ATTACHMENT_NAME_BYTES);
    expect(n.endsWith(".pdf")).toBe(true);
    expect(n).not.toContain("\ufffd");
  });

  test("unique within a message, case-insensitively", () => {
    const unique = uniqueNamer();
    expect(["a.pdf", "A.pdf", "a.pdf", "b", "b"].map(unique)).toEqual(["a.pdf", "A (2).pdf", "a (3).pdf", "b", "b (2)"]);
  });
});

describe("SMTP sender rate-limit keys", () => {
  test("IPv4 as is, IPv4-mapped unwrapped, IPv6 by /64", async () => {
    const { senderKey } = await import("../../src/smtp/server");
    expect(senderKey("203.0.113.7")).toBe("203.0.113.7");
    expect(senderKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(senderKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(senderKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(senderKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(senderKey("::1")).toBe("0:0:0:0::/64");
  });
});
