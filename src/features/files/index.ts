// The files feature: current files, version history, uploads and the storage endpoint.
// What other features may use of it: they import "../files", never a file inside this folder.
import { registerCredentialsEnded } from "../accounts";
import { releaseLocksOf } from "./lock-holders";

// A revoked key's or connection's file locks go with it (D257).
registerCredentialsEnded(releaseLocksOf);
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
export { TEXT_WRITE_MAX_CHARS, writeTextFile } from "./write-text";
// Used by the task table outside src/features.
export { expireUploads } from "./uploads/expiry";
// The dashboard's "create from a template" calls the same service as POST /buckets/from_template.
export { createFromTemplate, listTemplates } from "./bucket-templates";
export { FromTemplateBody } from "./model";

// The dashboard's file browser, file page and versions tab (same rules as the REST routes).
export { FOLDER_PAGE_MAX, folderPrefix, listFolder } from "./folders";
export type { FolderEntry } from "./folders";
export { fileHistory, getFile } from "./service";
export { appendText, copyOrMoveFile, deleteFile, renameFile } from "./ops";
export { changeEntries } from "./reorganize-entries";
export { FILE_LOCK_DEFAULT_S, FILE_LOCK_MAX_S, lockFiles, unlockFile } from "./locks";
export { AppendTextBody, CopyMoveBody, LockFilesBody, RenameBody } from "./model";
export { changesOfVersions, getVersion, listVersions, restoreVersion, snapshotAt, versionFiles } from "./versions/service";
export type { PathChange } from "./versions/service";
export { RestoreBody } from "./versions/model";
// Git sync refuses the files uploads refuse, with the same rules.
export { assertAllowedFile } from "./forbidden";
export { assertNotExecutable } from "./sniff";
export { bucketFileCount, pathsChangedSince } from "./sync-changes";
