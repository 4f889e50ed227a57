// bucket.metadata.publication_forms: checked when a bucket is created or PATCHed (every mistake
// named by its path in details.field), and read leniently by the visitor endpoint.
import { ApiError } from "../../core/errors";
import { FORMS, FORM_NAMES, isFormName, WIDGET_POSITIONS, type FormName, type WidgetPosition } from "./definitions";

export interface FormSettings {
  name: FormName;
  hosted: boolean;
  /** The fields a visitor must fill, each one of the form's own fields. */
  requiredFields: string[];
  position: { desktop: WidgetPosition; mobile: WidgetPosition };
}

export interface FormsConfig {
  enabled: boolean;
  forms: Map<FormName, FormSettings>;
  turnstile: "auto" | "off";
  /** Legacy flag: every form asks for an email address. */
  requireEmail: boolean;
}

const TOP_KEYS = new Set(["enabled", "forms", "turnstile", "require_email"]);
const FORM_KEYS = new Set(["name", "hosted", "required_fields", "widget_position"]);
const POSITION_KEYS = new Set(["desktop", "mobile"]);
const ROOT = "metadata.publication_forms";

function bad(field: string, message: string, extra: Record<string, unknown> = {}): never {
  // The message always names the setting, so a person reading only the message can find it.
  throw new ApiError("VALIDATION_FAILED", message.includes(field) ? message : `${field}: ${message}`, { field, ...extra });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function onlyKeys(value: Record<string, unknown>, allowed: Set<string>, at: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) bad(`${at}.${key}`, `${at} has no setting "${key}" (allowed: ${[...allowed].join(", ")}).`);
  }
}

function position(value: unknown, at: string): WidgetPosition {
  if (value === undefined) return "bottom-right";
  if (typeof value !== "string" || !(WIDGET_POSITIONS as readonly string[]).includes(value)) {
    bad(at, `${at} must be one of ${WIDGET_POSITIONS.join(", ")}.`, { allowed: WIDGET_POSITIONS });
  }
  return value as WidgetPosition;
}

/** Parse and check a configuration; throws VALIDATION_FAILED naming the first bad setting. */
export function parseFormsConfig(raw: unknown): FormsConfig {
  if (!isObject(raw)) bad(ROOT, `${ROOT} must be an object such as {"enabled": true, "forms": [{"name": "contact"}]}.`);
  onlyKeys(raw, TOP_KEYS, ROOT);
  if (raw.enabled !== undefined && typeof raw.enabled !== "boolean") bad(`${ROOT}.enabled`, `${ROOT}.enabled must be true or false.`);
  if (raw.require_email !== undefined && typeof raw.require_email !== "boolean") bad(`${ROOT}.require_email`, `${ROOT}.require_email must be true or false.`);
  if (raw.turnstile !== undefined && raw.turnstile !== "auto" && raw.turnstile !== "off")
    bad(`${ROOT}.turnstile`, `${ROOT}.turnstile must be "auto" or "off".`);
  const list = raw.forms ?? [];
  if (!Array.isArray(list)) bad(`${ROOT}.forms`, `${ROOT}.forms must be an array of forms.`);
  const forms = new Map<FormName, FormSettings>();
  list.forEach((entry: unknown, i: number) => {
    const at = `${ROOT}.forms[${i}]`;
    if (!isObject(entry)) bad(at, `${at} must be an object such as {"name": "contact"}.`);
    onlyKeys(entry, FORM_KEYS, at);
    const name = entry.name;
    if (typeof name !== "string" || !isFormName(name)) bad(`${at}.name`, `${at}.name must be one of ${FORM_NAMES.join(", ")}.`, { allowed: FORM_NAMES });
    if (forms.has(name)) bad(`${at}.name`, `The form "${name}" is configured twice.`);
    if (entry.hosted !== undefined && typeof entry.hosted !== "boolean") bad(`${at}.hosted`, `${at}.hosted must be true or false.`);
    const def = FORMS[name];
    const known = def.fields.map((f) => f.name);
    let required = def.defaultRequired;
    if (entry.required_fields !== undefined) {
      if (!Array.isArray(entry.required_fields)) bad(`${at}.required_fields`, `${at}.required_fields must be an array of field names.`);
      required = entry.required_fields.map((f: unknown, j: number) => {
        if (typeof f !== "string" || !known.includes(f)) {
          bad(`${at}.required_fields[${j}]`, `The ${name} form has no field ${JSON.stringify(f)} (its fields: ${known.join(", ")}).`, { allowed: known });
        }
        return f as string;
      });
    }
    const wp = entry.widget_position;
    if (wp !== undefined && !isObject(wp)) bad(`${at}.widget_position`, `${at}.widget_position must be {"desktop": ..., "mobile": ...}.`);
    if (wp) onlyKeys(wp, POSITION_KEYS, `${at}.widget_position`);
    forms.set(name, {
      name,
      hosted: entry.hosted !== false,
      requiredFields: [...new Set(required)],
      position: { desktop: position(wp?.desktop, `${at}.widget_position.desktop`), mobile: position(wp?.mobile, `${at}.widget_position.mobile`) },
    });
  });
  return {
    enabled: raw.enabled !== false,
    forms,
    turnstile: raw.turnstile === "auto" ? "auto" : "off",
    requireEmail: raw.require_email === true,
  };
}

/** The configuration a bucket serves, or null when it exposes no form (absent, disabled or unreadable). */
export function activeFormsConfig(metadata: unknown): FormsConfig | null {
  const raw = isObject(metadata) ? metadata.publication_forms : undefined;
  if (raw === undefined) return null;
  try {
    const config = parseFormsConfig(raw);
    return config.enabled && config.forms.size > 0 ? config : null;
  } catch {
    return null; // stored before validation existed: serve nothing rather than guess
  }
}

/** The fields a submission of this form must carry (the legacy require_email adds email where the form has one). */
export function requiredFieldsOf(config: FormsConfig, settings: FormSettings): string[] {
  const hasEmail = FORMS[settings.name].fields.some((f) => f.name === "email");
  return config.requireEmail && hasEmail && !settings.requiredFields.includes("email") ? [...settings.requiredFields, "email"] : settings.requiredFields;
}
