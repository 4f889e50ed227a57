// The Site tab's forms as the REST bodies they stand for, checked with the REST schemas' own
// field definitions: publish and preview, the folder to serve, settings, expiry.
import { Type } from "@sinclair/typebox";
import { PatchPublicationBody, publishFields } from "../../publish";
import { checkForm } from "../forms";
import { formField } from "../shell";

// The publish form's fields, checked with the REST schema's own field definitions.
const PublishForm = Type.Object({ site_mode: publishFields.site_mode, access_mode: publishFields.access_mode, password: publishFields.password });
const FORM_MESSAGES = {
  password: "A password has at least 6 characters (leave it empty to have one generated).",
  site_mode: "Choose a site mode.",
  access_mode: "Choose who may open the site.",
};

const RootForm = Type.Object({ publication_root_directory: publishFields.publication_root_directory });
const ROOT_MESSAGES = { publication_root_directory: "A folder path has at most 1,024 characters." };

// The settings form's text fields, checked with the REST PATCH schema's own definitions.
const SettingsForm = Type.Object({ title: PatchPublicationBody.properties.title, description: PatchPublicationBody.properties.description });
const SETTINGS_MESSAGES = { title: "A title has at most 200 characters.", description: "A description has at most 2,000 characters." };
const SETTINGS_SWITCHES = ["clean_urls", "tracking_enabled", "publication_analytics_enabled", "publication_client_events_enabled"] as const;

const ExpiryForm = Type.Object({ expires_at: PatchPublicationBody.properties.expires_at });

/** The expiry form as the PATCH's `expires_at`: a time, or null to remove it (D281 locks both). */
export function expiryInput(body: unknown): { expires_at: string | null } {
  if (formField(body, "remove") === "1") return { expires_at: null };
  return checkForm(
    ExpiryForm,
    { expires_at: formField(body, "expires_at").trim() },
    {
      expires_at: "Give a date and time in UTC, e.g. 2030-12-31T23:00:00Z.",
    },
  );
}

/**
 * The settings form as the REST PATCH body: the form always shows every setting, so an
 * unticked box is an explicit false (a browser sends nothing for it).
 */
export function settingsInput(body: unknown) {
  const text = checkForm<{ title: string; description: string }>(
    SettingsForm,
    { title: formField(body, "title").trim(), description: formField(body, "description").trim() },
    SETTINGS_MESSAGES,
  );
  return { ...text, ...Object.fromEntries(SETTINGS_SWITCHES.map((n) => [n, formField(body, n) === "on"])) };
}

/**
 * The folder to serve, only when the form has the field: the publish form always shows it
 * (prefilled with the live site's), while the plan-choice buttons post it only when one was typed; a missing
 * field must keep the service's default (the bucket's metadata), not mean "the whole bucket".
 */
export function rootInput(body: unknown): { publication_root_directory?: string } {
  if (!body || typeof body !== "object" || !("publication_root_directory" in body)) return {};
  return checkForm(RootForm, { publication_root_directory: formField(body, "publication_root_directory").trim() }, ROOT_MESSAGES);
}

export function publishInput(body: unknown, password = formField(body, "password")) {
  const input = {
    site_mode: formField(body, "site_mode") || undefined,
    access_mode: formField(body, "access_mode") || undefined,
    password: password || undefined,
  };
  if (input.access_mode !== "password") delete input.password;
  return checkForm<{ site_mode?: "static" | "spa"; access_mode?: "public" | "password" | "require_email"; password?: string }>(
    PublishForm,
    input,
    FORM_MESSAGES,
  );
}
