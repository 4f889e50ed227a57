// The git sync feature: a bucket and a branch of a git repository kept in step both ways.
// What other features may use of it: they import "../gitsync", never a file inside this folder.
export { gitSyncRoutes } from "./routes";
export { bucketSyncFields, presentSetup, presentSync, settingsUrl } from "./present";
export { connect, disconnect, eligibility, getConnection, patchConnection, requestSync, saveRepository, setupOf, webhookSecretOf, webhookUrl } from "./service";
export type { SavedRepositoryInput } from "./service";
// Used by the task table outside src/features.
export { GIT_POLL_JOB, GIT_SYNC_JOB, gitSyncJob, pollConnections } from "./jobs";
// The GitHub App (the dashboard's Git page and its install round trip).
export { githubApp as githubAppOf } from "./github-app";
export { completeGithubSetup, startGithubSetup, GITHUB_CALLBACK_PATH } from "./github-setup";
export { connectGithub, exportGithub, githubSetupLists } from "./github-connect";
export { removeOrphanStores } from "./jobs";
