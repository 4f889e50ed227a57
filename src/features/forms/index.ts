// The forms feature: seven built-in forms a published site offers its visitors, their
// configuration at bucket.metadata.publication_forms, submissions sealed at rest, the owner API.
// What other features and src/sites may use of it: they import "../forms", never a file inside.
import { registerMetadataRule } from "../buckets";
import { parseFormsConfig } from "./config";

registerMetadataRule("publication_forms", (value) => void parseFormsConfig(value));

export { FORMS, FORM_NAMES, WIDGET_POSITIONS, type FormName } from "./definitions";
export { activeFormsConfig, parseFormsConfig, type FormsConfig } from "./config";
export { FormEndpoint, FORM_POSTS_PER_FORM_MINUTE, FORM_POSTS_PER_IP_MINUTE, MAX_FILL_MS, MIN_FILL_MS, type FormSite } from "./visitor";
export { formHtml, notSentBody, startedToken, HONEYPOT_FIELD, STARTED_FIELD } from "./render";
export { FORMS_NOTIFY_JOB, notifyNewSubmissions } from "./notify";
export { deleteSubmission, getSubmission, listSubmissions, patchSubmission, replyToSubmission, REPLY_MAX, SUBMISSION_PAGE } from "./service";
export { submissionsCsv } from "./export";
export { FormWidget } from "./widget";
