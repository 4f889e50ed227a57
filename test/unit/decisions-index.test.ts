// scripts/decisions-index.ts files docs/decisions.md: entries keep their text, numbers never
// change once given, entries appended later (or merged in from another branch) are filed too.
import { describe, expect, test } from "bun:test";
import { areaOf, mergeEntries, parse, render, settle } from "../../scripts/decisions-index";

const unfiled = `# Decisions

## Buckets: archived is 409
The state refuses it.

Second paragraph.

## SQLite, configured in one place
WAL, busy timeout.

## Sites: SPA fallback
Missing assets stay 404.
`;
const dates: Record<string, string> = {
  "Buckets: archived is 409": "2026-11-20",
  "SQLite, configured in one place": "2026-11-19",
  "Sites: SPA fallback": "2026-11-21",
  "Mail: a later rule": "2026-11-25",
};
const file = (text: string) => render(settle(parse(text), (title) => dates[title]!));

describe("decisions index", () => {
  const filed = file(unfiled);

  test("entries are grouped by area, numbered oldest first, dated, indexed, and keep their text", () => {
    expect(filed).toContain("## Buckets\n\n### D2 · Buckets: archived is 409\n*Added 2026-11-20*\n\nThe state refuses it.\n\nSecond paragraph.\n");
    expect(filed).toContain("## Core\n\n### D1 · SQLite, configured in one place\n*Added 2026-11-19*\n\nWAL, busy timeout.\n");
    expect(filed).toContain("- [D3](#d3--sites-spa-fallback) SPA fallback (2026-11-21)");
    expect(filed.indexOf("## Index")).toBeLessThan(filed.indexOf("## Buckets\n"));
  });

  test("filing a filed file changes nothing", () => {
    expect(file(filed)).toBe(filed);
  });

  test("an entry appended later gets the next number and joins its area; old numbers stay", () => {
    const again = file(`${filed}\n## Mail: a later rule\nText.\n`);
    expect(again).toContain("## Mail\n\n### D4 · Mail: a later rule\n*Added 2026-11-25*\n\nText.\n");
    expect(again).toContain("### D1 · SQLite, configured in one place");
    expect(again).toContain("### D2 · Buckets: archived is 409");
  });

  test("a number taken twice (two branches filed at once) is given again to the later entry", () => {
    const clash = filed.replace("### D3 · Sites: SPA fallback", "### D2 · Sites: SPA fallback");
    const again = file(clash);
    expect(again).toContain("### D2 · Buckets: archived is 409");
    expect(again).toContain("### D3 · Sites: SPA fallback"); // the next number after the highest in use
    expect(again).not.toBe(clash); // so --check fails until the file is filed again
  });

  test("a merge takes the other side's new entries and the text only it changed", () => {
    const theirs = `${unfiled.replace("Missing assets stay 404.", "Missing assets stay 404, always.")}\n## Mail: a later rule\nText.\n`;
    const warnings: string[] = [];
    const merged = render(
      settle(
        mergeEntries(parse(filed), parse(theirs), parse(unfiled), (w) => warnings.push(w)),
        (title) => dates[title]!,
      ),
    );
    expect(merged).toContain("### D3 · Sites: SPA fallback\n*Added 2026-11-21*\n\nMissing assets stay 404, always.\n");
    expect(merged).toContain("### D4 · Mail: a later rule");
    expect(warnings).toEqual([]);
  });

  test("a merge keeps our text when both sides changed an entry, and says so", () => {
    const ours = filed.replace("WAL, busy timeout.", "WAL, busy timeout, one writer.");
    const theirs = unfiled.replace("WAL, busy timeout.", "WAL only.");
    const warnings: string[] = [];
    const merged = render(
      settle(
        mergeEntries(parse(ours), parse(theirs), parse(unfiled), (w) => warnings.push(w)),
        (title) => dates[title]!,
      ),
    );
    expect(merged).toContain("WAL, busy timeout, one writer.");
    expect(warnings).toEqual(['decisions-index: "SQLite, configured in one place" was changed on both sides; ours kept, merge the text by hand']);
  });

  test("areas come from the heading's prefix, with synonyms and early unprefixed titles mapped", () => {
    expect(areaOf("Inbound email: bucket addresses")).toBe("Mail");
    expect(areaOf("Public clients only, PKCE S256 only")).toBe("OAuth");
    expect(areaOf("Domains: custom domains need a TXT proof")).toBe("Domains");
    expect(areaOf("Something with no area")).toBe("Other");
  });
});
