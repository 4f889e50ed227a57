// A page too large to read whole gets its form macros filled as it streams (D269): whatever the
// chunks, the answer is the page with every macro replaced as a page read whole would have it,
// and the end added after the last byte.
import { describe, expect, test } from "bun:test";
import { MACRO_NAME_MAX, macroStream } from "../../src/features/forms/page-stream";

const MACRO = new RegExp(`\\{\\{PIER_FORM(?::([a-z]{1,${MACRO_NAME_MAX}}))?\\}\\}`, "g");
const fill = (name: string | undefined) => (name === undefined ? "[ALL]" : name === "skip" ? "" : `[${name.toUpperCase()}]`);
const expected = (page: string) => page.replace(MACRO, (_m, name: string | undefined) => fill(name)) + "<END>";

async function streamed(page: string, cuts: number[]): Promise<string> {
  const bytes = new TextEncoder().encode(page);
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 1; i < edges.length; i++) c.enqueue(bytes.slice(edges[i - 1], edges[i]));
      c.close();
    },
  });
  return new Response(source.pipeThrough(macroStream(fill, () => "<END>"))).text();
}

const PAGES = [
  "<p>héllo {{PIER_FORM:contact}} wörld {{PIER_FORM}}</p>",
  "{{PIER_FORM}}{{PIER_FORM:skip}}{{PIER_FORM:waitlist}}",
  "{{{PIER_FORM}}} {{PIER_FORM:}} {{PIER_FORM:Contact}} {{PIER_FORM:contact} {{PIER_FORM:a1}} {{PIER_FORM",
  `{{PIER_FORM:${"a".repeat(MACRO_NAME_MAX)}}} {{PIER_FORM:${"a".repeat(MACRO_NAME_MAX + 1)}}} {{PIER_FOR}} {{PIER_FORM:quote}`,
  "no macro at all, 😀 only text {{ }} {{PIER",
  "",
];

describe("filling form macros as a page streams", () => {
  test("every cut into two chunks gives what the whole page gives", async () => {
    for (const page of PAGES) {
      const length = new TextEncoder().encode(page).length;
      for (let cut = 0; cut <= length; cut++) expect(await streamed(page, [cut])).toBe(expected(page));
    }
  });

  test("one byte a chunk gives what the whole page gives", async () => {
    for (const page of PAGES) {
      const length = new TextEncoder().encode(page).length;
      expect(
        await streamed(
          page,
          Array.from({ length }, (_, i) => i),
        ),
      ).toBe(expected(page));
    }
  });

  test("a name past the bound is no macro, even cut by a chunk", async () => {
    const page = `{{PIER_FORM:${"a".repeat(100_000)}`;
    expect(await streamed(page, [50_000])).toBe(`${page}<END>`);
  });
});
