// The mail feature: inbound mail filing into buckets and outbound notification mail.
// What other features may use of it: they import "../mail", never a file inside this folder.
export { MESSAGES_PAGE_MAX, getInboundEmail, listMessages, recordMessageRead } from "./messages";
export { mailerFor } from "./outbound";
export { isMailPath } from "./paths";
