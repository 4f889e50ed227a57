// The seven built-in forms. Labels and visitor fields are the server's: a site configures which
// forms it offers and which of their fields are required, never new fields (docs/forms.md).

export const FORM_NAMES = ["contact", "feedback", "comments", "quote", "waitlist", "question", "intake"] as const;
export type FormName = (typeof FORM_NAMES)[number];

export interface FieldDef {
  name: string;
  label: string;
  type: "text" | "email" | "tel" | "textarea";
  maxLength: number;
}

export interface FormDef {
  name: FormName;
  label: string;
  fields: FieldDef[];
  /** Fields required when the configuration names none. */
  defaultRequired: string[];
  submitLabel: string;
}

const name: FieldDef = { name: "name", label: "Name", type: "text", maxLength: 200 };
const email: FieldDef = { name: "email", label: "Email", type: "email", maxLength: 320 };
const message: FieldDef = { name: "message", label: "Message", type: "textarea", maxLength: 5000 };
const company: FieldDef = { name: "company", label: "Company", type: "text", maxLength: 200 };
const phone: FieldDef = { name: "phone", label: "Phone", type: "tel", maxLength: 50 };

export const FORMS: Record<FormName, FormDef> = {
  contact: { name: "contact", label: "Contact", fields: [name, email, message], defaultRequired: ["email", "message"], submitLabel: "Send" },
  feedback: {
    name: "feedback",
    label: "Feedback",
    fields: [name, email, { name: "rating", label: "Rating (1-5)", type: "text", maxLength: 1 }, message],
    defaultRequired: ["message"],
    submitLabel: "Send feedback",
  },
  comments: { name: "comments", label: "Feedback Visible To Others", fields: [name, message], defaultRequired: ["message"], submitLabel: "Post" },
  quote: {
    name: "quote",
    label: "Request a Quote",
    fields: [
      name,
      email,
      company,
      { name: "budget", label: "Budget", type: "text", maxLength: 100 },
      { ...message, name: "details", label: "Project details" },
    ],
    defaultRequired: ["email", "details"],
    submitLabel: "Request a quote",
  },
  waitlist: { name: "waitlist", label: "Join the Waitlist", fields: [name, email], defaultRequired: ["email"], submitLabel: "Join" },
  question: {
    name: "question",
    label: "Ask a Question",
    fields: [name, email, { ...message, name: "question", label: "Question" }],
    defaultRequired: ["question"],
    submitLabel: "Ask",
  },
  intake: {
    name: "intake",
    label: "Intake",
    fields: [name, email, phone, company, message],
    defaultRequired: ["name", "email"],
    submitLabel: "Submit",
  },
};

export function isFormName(value: string): value is FormName {
  return (FORM_NAMES as readonly string[]).includes(value);
}

export const WIDGET_POSITIONS = [
  "top-left",
  "top-center",
  "top-right",
  "center-left",
  "center",
  "center-right",
  "bottom-left",
  "bottom-center",
  "bottom-right",
] as const;
export type WidgetPosition = (typeof WIDGET_POSITIONS)[number];
