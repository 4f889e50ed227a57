// The mcp feature: the hosted MCP server and its tools.
// What other features may use of it: they import "../mcp", never a file inside this folder.
// No service.ts: MCP decides nothing itself. server.ts binds the tools (tools.ts, *-tools.ts) to
// the caller; each tool calls the same service function as the matching REST route.
export { tools } from "./tools";
