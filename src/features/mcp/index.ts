// The mcp feature: the hosted MCP server and its tools.
// What other features may use of it: they import "../mcp", never a file inside this folder.
export { tools } from "./tools";
