// The mail feature: inbound mail filing into buckets and outbound notification mail.
// What other features may use of it: they import "../mail", never a file inside this folder.
// The services (no service.ts: each part of mail is its own flow): filer.ts files a received
// message into buckets, messages.ts reads what was filed, outbound.ts sends notification mail,
// delivery-check.ts is `pier admin mail test`; sender-auth.ts gives SPF/DKIM/DMARC verdicts.
export { MESSAGES_PAGE_MAX, getInboundEmail, listMessages, recordMessageRead } from "./messages";
// The dashboard's message page: a GET shows the read state, a POST records the read.
export { isMessageRead } from "./messages";
export { mailerFor } from "./outbound";
export { isMailPath } from "./paths";
// Used by the site server and `pier admin` outside src/features.
export { listOutbox, quotedForMail } from "./outbound";
// The task table's daily prune.
export { pruneOutbox } from "./outbound";
export { localSmtpServer, sendTestMessage } from "./delivery-check";
export { relayTlsLabel } from "./relay-tls";
// The dashboard's Email tab reads message.json through the files service and shows it.
export type { MessageJson } from "./inbound";
// Used by the dashboard's admin pages.
export { getOutboxMessage } from "./outbound";
