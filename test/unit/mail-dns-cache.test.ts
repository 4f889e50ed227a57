// The DNS cache in front of SPF/DKIM/DMARC lookups: repeated questions are answered from memory
// until the answer expires; names that do not exist are remembered, temporary failures are not;
// the cache stays bounded.
import { describe, expect, test } from "bun:test";
import type { DNSResolver } from "mailauth";
import { cachingResolver, FALLBACK_TTL_MS, MAX_ENTRIES } from "../../src/features/mail/dns-cache";

function counting(answer: (name: string) => unknown) {
  const asked: string[] = [];
  const resolver = (async (name: string, rrtype: string) => {
    asked.push(`${name}/${rrtype}`);
    return answer(name);
  }) as DNSResolver;
  return { asked, resolver };
}

describe("mail DNS cache", () => {
  test("a repeated question is asked once until its answer expires, then asked again", async () => {
    let now = 1_000_000;
    const inner = counting(() => [["v=spf1 -all"]]);
    const r = cachingResolver(inner.resolver, () => now);
    expect(await r("Sender.test", "TXT")).toEqual([["v=spf1 -all"]]);
    expect(await r("sender.test.", "TXT")).toEqual([["v=spf1 -all"]]);
    await Promise.all([r("_dmarc.sender.test", "TXT"), r("_dmarc.sender.test", "TXT")]); // concurrent: one lookup
    expect(inner.asked).toEqual(["Sender.test/TXT", "_dmarc.sender.test/TXT"]);
    now += FALLBACK_TTL_MS + 1;
    await r("sender.test", "TXT");
    expect(inner.asked.length).toBe(3);
  });

  test("a name that does not exist is remembered; a temporary failure is asked again", async () => {
    const fail = (code: string) => {
      throw Object.assign(new Error(code), { code });
    };
    const inner = counting((name) => fail(name.startsWith("missing") ? "ENOTFOUND" : "ESERVFAIL"));
    const r = cachingResolver(inner.resolver);
    for (let i = 0; i < 3; i++) {
      await expect(r("missing.test", "TXT")).rejects.toMatchObject({ code: "ENOTFOUND" });
      await expect(r("flaky.test", "TXT")).rejects.toMatchObject({ code: "ESERVFAIL" });
    }
    expect(inner.asked.filter((q) => q.startsWith("missing")).length).toBe(1);
    expect(inner.asked.filter((q) => q.startsWith("flaky")).length).toBe(3);
  });

  test("bounded: past the limit the least recently used answer is dropped", async () => {
    const inner = counting((name) => [[name]]);
    const r = cachingResolver(inner.resolver);
    for (let i = 0; i <= MAX_ENTRIES; i++) await r(`d${i}.test`, "TXT");
    expect(inner.asked.length).toBe(MAX_ENTRIES + 1);
    await r(`d${MAX_ENTRIES}.test`, "TXT"); // still cached
    expect(inner.asked.length).toBe(MAX_ENTRIES + 1);
    await r("d0.test", "TXT"); // the oldest was dropped
    expect(inner.asked.length).toBe(MAX_ENTRIES + 2);
  });
});
