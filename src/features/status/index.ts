// The status feature: server status and the home page.
// What other features may use of it: they import "../status", never a file inside this folder.
export { getStatus } from "./service";
