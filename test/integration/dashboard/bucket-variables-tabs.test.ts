// Two dashboard tabs on one bucket's Settings tab, each changing one variable or secret: every
// save sets or deletes only its own name (merged in one transaction), so neither tab undoes the
// other's change nor one an agent made through the API after the tabs were opened. The REST
// PATCH keeps its contract: `variables` replaces them all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

/** The token of the page's own forms (the sign-out form in the navigation carries a plain one). */
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;

describe("bucket variables from two dashboard tabs", () => {
  test("concurrent saves and deletes of different names all land; the API's PATCH still replaces", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "Two tabs" });
    const vars = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/variables`, { key: u.key })).body.data;
    const patch = (body: unknown) => t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body });
    expect((await patch({ variables: { KEEP: "1", OLD: "2" }, secrets: { TOKEN: "s1" } })).status).toBe(200);

    const settings = `/dashboard/buckets/${b.id}/settings`;
    const tabs = [new Browser(t.url), new Browser(t.url)];
    for (const tab of tabs) expect((await tab.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    // Each form is rendered before any of them is sent, as in tabs left open.
    const forms = await Promise.all(
      [tabs[0]!, tabs[1]!, tabs[0]!, tabs[1]!, tabs[0]!].map(async (tab) => ({ tab, csrf: formCsrf((await tab.get(settings)).text) })),
    );
    // An agent adds one through the API after the pages were rendered.
    expect((await patch({ variables: { KEEP: "1", OLD: "2", AGENT: "a" } })).status).toBe(200);

    const [f0, f1, f2, f3, f4] = forms as [(typeof forms)[0], (typeof forms)[0], (typeof forms)[0], (typeof forms)[0], (typeof forms)[0]];
    const answers = await Promise.all([
      f0.tab.post(`${settings}/variables/set`, { csrf: f0.csrf, form: "variable-add", kind: "variable", name: "FROM_ONE", value: "x" }),
      f1.tab.post(`${settings}/variables/set`, { csrf: f1.csrf, form: "variable-add", kind: "variable", name: "FROM_TWO", value: "y" }),
      f2.tab.post(`${settings}/variables/delete`, { csrf: f2.csrf, kind: "variable", name: "OLD" }),
      f3.tab.post(`${settings}/variables/set`, { csrf: f3.csrf, form: "variable-add", kind: "secret", name: "NEW_SECRET", value: "s2" }),
      f4.tab.post(`${settings}/variables/set`, { csrf: f4.csrf, form: "variable:KEEP", kind: "variable", name: "KEEP", value: "1b" }),
    ]);
    for (const a of answers) expect(a.status).toBe(303);
    // A row's own form changes its value on purpose; "Add" with a name already set says it replaced it.
    expect(answers[4]!.location).toContain("done=variable-saved");
    const added = await tabs[0]!.post(`${settings}/variables/set`, {
      csrf: formCsrf((await tabs[0]!.get(settings)).text),
      form: "variable-add",
      kind: "variable",
      name: "KEEP",
      value: "1b",
    });
    expect(added.location).toContain("done=variable-replaced");
    expect((await tabs[0]!.get(added.location!)).text).toContain("Variable replaced: that name was already set");
    const after = await vars();
    expect(after.variables).toEqual({ AGENT: "a", FROM_ONE: "x", FROM_TWO: "y", KEEP: "1b" });
    expect(after.secrets.map((s: { name: string }) => s.name)).toEqual(["NEW_SECRET", "TOKEN"]);

    // A refused save (the name is a secret's) changes nothing, in either list.
    const csrf = formCsrf((await tabs[1]!.get(settings)).text);
    const refused = await tabs[1]!.post(`${settings}/variables/set`, { csrf, form: "variable-add", kind: "variable", name: "TOKEN", value: "z" });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("cannot be both a public variable and a secret");
    expect(await vars()).toEqual(after);

    // The REST contract is unchanged: `variables` replaces every public variable.
    expect((await patch({ variables: { ONLY: "1" } })).body.data.variables).toEqual({ ONLY: "1" });
    expect((await vars()).secrets.map((s: { name: string }) => s.name)).toEqual(["NEW_SECRET", "TOKEN"]);
  });
});
