// The files feature: current files, version history, uploads and the storage endpoint.
// What other features may use of it: they import "../files", never a file inside this folder.
export { commitChanges, latestVersion } from "./commit";
export type { BlobRef, Change, SystemWriter } from "./commit";
export { FORBIDDEN_EXTENSIONS, FORBIDDEN_NAMES, forbiddenReason, normalizeContentType } from "./forbidden";
export { isTextType } from "./ops";
export { EMAIL_ROOT, isMailPath, normalizePath } from "./paths";
export { presentFile, presentFileWrite } from "./present";
export { FILE_PAGE_MAX, currentFiles, downloadUrl, listFiles, readFileBytes } from "./service";
export { ExecutableScanner } from "./sniff";
export { alreadyStored, descriptor, entryBytesReady, findEntry, insertEntry, markEntriesFinalized, validateDeclared } from "./uploads/declare";
export type { UploadEntryRow } from "./uploads/declare";
export { guessContentType, writeFiles } from "./write";
// Used by the task table outside src/features.
export { expireUploads } from "./uploads/expiry";
// The dashboard's "create from a template" calls the same service as POST /buckets/from_template.
export { createFromTemplate, listTemplates } from "./bucket-templates";
export { FromTemplateBody } from "./model";
