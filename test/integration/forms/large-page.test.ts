// A page larger than the site server's in-memory file limit gets its hosted forms as it streams
// (D269): many views of it at once hold no copy of the page each, and smaller pages still get
// their forms before </body>.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MEMORY_FILE_LIMIT } from "../../../src/sites/files";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

const MiB = 1024 * 1024;
const HEAD = "<!doctype html><html><body><h1>Big</h1>{{PIER_FORM:contact}}<pre>";
const TAIL = "</pre>{{PIER_FORM:contact}}</body></html>\n";
const LINE = "All work and no play makes a very large page. 0123456789 abcdefghijklmnopqrstuvwxyz\n";
/** 32 MiB of page: 16 times the limit, so 20 views held whole would be 640 MiB or more. */
const SIZE = 32 * MiB;
const VIEWS = 20;

let t: TestPier;
let site: PublishedSite;
let plain: PublishedSite;
let filler: string;
beforeAll(async () => {
  // This process serves the pages, so its memory is what the views cost.
  t = await startTestPier({}, { servingWorkers: 1 });
  filler = LINE.repeat(Math.ceil(SIZE / LINE.length));
  site = await publishSite(t, {
    files: [
      { path: "big.html", bytes: HEAD + filler + TAIL },
      { path: "small.html", bytes: "<!doctype html><html><body><h1>Small</h1>{{PIER_FORM:contact}}</body></html>" },
    ],
  });
  // The same page on a site without forms: what streaming a file costs here anyway (both ends are this process).
  plain = await publishSite(t, { files: [{ path: "big.html", bytes: HEAD + filler + TAIL }] });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: site.user.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "waitlist" }] } } } },
  });
  expect(r.status).toBe(200);
}, 120_000);
afterAll(() => t?.stop());

/** Reads an answer chunk by chunk, keeping only its length and its first and last 64 KiB. */
async function drain(res: Response): Promise<{ length: number; head: string; tail: string }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let length = 0;
  let head = "";
  let tail = new Uint8Array(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length < 65_536) head += decoder.decode(value.subarray(0, 65_536 - length), { stream: true });
    length += value.length;
    const joined = new Uint8Array(tail.length + value.length);
    joined.set(tail);
    joined.set(value, tail.length);
    tail = joined.subarray(Math.max(0, joined.length - 65_536));
  }
  return { length, head, tail: new TextDecoder().decode(tail) };
}

describe("forms in a page past the in-memory file limit", () => {
  test("the page streams with its macros filled and the floating forms after its end; headers as for any page with forms", async () => {
    expect(HEAD.length + filler.length + TAIL.length).toBeGreaterThan(MEMORY_FILE_LIMIT);
    const res = await siteFetch(t, site.host, "/big");
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("public, no-cache");
    const { length, head: first, tail } = await drain(res);
    // The first macro holds the contact form, inline; the second is blank (each form once a page).
    expect(first).toStartWith('<!doctype html><html><body><h1>Big</h1><form class="pier-form"');
    expect(first).toContain('data-pier-form="contact"');
    expect(first).toContain(`<pre>${LINE}`);
    expect(tail).toContain(`${LINE}</pre></body></html>\n<style>`);
    expect(tail).toContain('data-pier-widget="waitlist"');
    expect(tail).not.toContain('data-pier-widget="contact"');
    expect(tail).not.toContain("{{PIER_FORM");
    expect(tail).toEndWith('<script src="/_pier/forms.js" defer></script><script type="module" src="/_pier/altcha.js"></script>');
    // The filler went through whole: the answer is the page, less its two macros, plus the forms.
    expect(length).toBeGreaterThan(HEAD.length + filler.length + TAIL.length - 2 * "{{PIER_FORM:contact}}".length);
    expect(length).toBeLessThan(HEAD.length + filler.length + TAIL.length + 64 * 1024);
    const head = await siteFetch(t, site.host, "/big", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBeNull();
  }, 60_000);

  test(`${VIEWS} views at once do not each hold the page`, async () => {
    const rss = () => process.memoryUsage().rss;
    /** How far this process's memory rose while VIEWS views of the host's big page were read at once. */
    const growth = async (host: string) => {
      await drain(await siteFetch(t, host, "/big")); // warm every code path
      Bun.gc(true);
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 5);
      try {
        const lengths = await Promise.all(Array.from({ length: VIEWS }, async () => (await drain(await siteFetch(t, host, "/big"))).length));
        expect(new Set(lengths).size).toBe(1);
      } finally {
        clearInterval(sampler);
      }
      return (Math.max(peak, rss()) - before) / MiB;
    };
    const streamed = await growth(plain.host);
    // The lower of two rounds: the process's RSS also moves with whatever else it runs (a test
    // file before this one in the same test process), and a page held per view shows in both.
    const withForms = Math.min(await growth(site.host), await growth(site.host));
    // Held whole, each view would add a copy of the page at least (here about three: the text, the
    // rewritten text and the answer's bytes), 640 MiB for 20; streamed, forms cost about what
    // streaming the file costs anyway (the reading end buffers some too). Half the copies is the
    // line: a wide margin either way on a loaded machine.
    expect(withForms).toBeLessThan(streamed + (VIEWS * SIZE) / MiB / 2);
  }, 120_000);

  test("a page within the limit still gets its forms before </body>, read whole", async () => {
    const res = await siteFetch(t, site.host, "/small");
    expect(res.headers.get("etag")).toBeNull();
    const page = await res.text();
    expect(page).toStartWith('<!doctype html><html><body><h1>Small</h1><form class="pier-form"');
    expect(page).toContain('data-pier-widget="waitlist"');
    expect(page).toEndWith('<script type="module" src="/_pier/altcha.js"></script></body></html>');
    expect(res.headers.get("content-length")).toBe(String(new TextEncoder().encode(page).length));
  });
});
