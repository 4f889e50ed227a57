// The agent-auth feature: how agents sign in (email codes, login links) and their activity log.
// What other features may use of it: they import "../agent-auth", never a file inside this folder.
// (Nothing yet: no other feature uses this one; its routes are mounted by features/index.ts.)
// Used by the app (src/app.ts) outside src/features.
export { agentActivityHook } from "./routes";
// Used by the dashboard's account pages.
export { listActivity } from "./activity";
