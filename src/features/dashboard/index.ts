// The dashboard feature: Pier's signed-in web UI, server-rendered from sites/dashboard/ and
// built on the other features' services (through their index.ts), never a second implementation.
export { dashboardRoutes } from "./routes";
