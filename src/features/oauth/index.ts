// The oauth feature: OAuth clients, device and authorization-code grants, connections.
// What other features may use of it: they import "../oauth", never a file inside this folder.
// The services (no service.ts: one file per grant, as the RFCs split them): clients.ts
// (registration), device.ts and authorize.ts (the two grants), token.ts (the token endpoint),
// grants.ts and connections.ts (approved connections and their tokens).
import { registerCredentialsEnded } from "../accounts";
import { revokeGrantsOfEndedKeys } from "./key-revoked";

// Revoking a device login's API key ends its connection too (D272).
registerCredentialsEnded(revokeGrantsOfEndedKeys);
export { DEVICE_GRANT } from "./clients";
export { withCors } from "./cors";
export { resourceMetadataUrl } from "./metadata";
export { DEFAULT_PERMISSION, MCP_SCOPE, PERMISSION_SCOPES } from "./scopes";
export { ACCESS_TOKEN_TTL_S, DEVICE_CODE_TTL_S, DEVICE_POLL_INTERVAL_S, REFRESH_TOKEN_TTL_S } from "./credentials";
// Used by the task table outside src/features.
export { purgeExpiredOAuthCodesAndTokens } from "./housekeeping";
export { actorFromGrantId } from "./grants";
// Used by the dashboard's account pages.
export { listConnections, revokeConnection } from "./connections";
export type { ConnectionView } from "./connections";
