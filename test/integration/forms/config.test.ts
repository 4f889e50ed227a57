// bucket.metadata.publication_forms is checked on create and PATCH: a bad setting is refused with
// its path named and nothing is stored; a good one is kept as sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let u: TestUser;
let bucketId: string;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Forms" } } });
  bucketId = b.body.data.bucket.id;
});
afterAll(() => t?.stop());

const patch = (forms: unknown) =>
  t.api("PATCH", `/api/v1/buckets/${bucketId}`, { key: u.key, body: { bucket: { metadata: { note: "x", publication_forms: forms } } } });

describe("publication_forms on bucket PATCH", () => {
  test("a full configuration is accepted and read back unchanged", async () => {
    const forms = {
      enabled: true,
      turnstile: "auto",
      require_email: true,
      forms: [
        { name: "contact", hosted: true, required_fields: ["email", "message"], widget_position: { desktop: "top-left", mobile: "bottom-center" } },
        { name: "comments", hosted: false },
      ],
    };
    const r = await patch(forms);
    expect(r.status).toBe(200);
    const g = await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: u.key });
    expect(g.body.data.bucket.metadata.publication_forms).toEqual(forms);
  });

  test.each([
    [{ forms: [{ name: "newsletter" }] }, "metadata.publication_forms.forms[0].name"],
    [{ forms: [{ name: "contact" }, { name: "contact" }] }, "metadata.publication_forms.forms[1].name"],
    [{ forms: [{ name: "contact", required_fields: ["phone"] }] }, "metadata.publication_forms.forms[0].required_fields[0]"],
    [{ forms: [{ name: "contact", widget_position: { desktop: "middle" } }] }, "metadata.publication_forms.forms[0].widget_position.desktop"],
    [{ forms: [{ name: "contact", widget_position: { tablet: "center" } }] }, "metadata.publication_forms.forms[0].widget_position.tablet"],
    [{ forms: [{ name: "contact", hosted: "yes" }] }, "metadata.publication_forms.forms[0].hosted"],
    [{ enabled: "true" }, "metadata.publication_forms.enabled"],
    [{ turnstile: "always" }, "metadata.publication_forms.turnstile"],
    [{ colour: "red" }, "metadata.publication_forms.colour"],
    [{ forms: { name: "contact" } }, "metadata.publication_forms.forms"],
    ["contact", "metadata.publication_forms"],
  ])("%j is refused naming %s, and the stored configuration stays", async (forms, field) => {
    const before = (await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: u.key })).body.data.bucket.metadata;
    const r = await patch(forms);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("VALIDATION_FAILED");
    expect(r.body.error.details.field).toBe(field);
    expect(r.body.error.message).toContain(field);
    const after = (await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: u.key })).body.data.bucket.metadata;
    expect(after).toEqual(before);
  });

  test("a new bucket with a bad configuration is not created", async () => {
    const r = await t.api("POST", "/api/v1/buckets", {
      key: u.key,
      body: { bucket: { title: "Bad forms", metadata: { publication_forms: { forms: [{ name: "chat" }] } } } },
    });
    expect(r.status).toBe(422);
    const list = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(list.body.data.buckets.map((b: { title: string }) => b.title)).not.toContain("Bad forms");
  });
});
