export * from "./accounts";
export * from "./buckets";
export * from "./jobs";
export * from "./files";
export * from "./publish";
export * from "./outbound-mail";
export * from "./mail";
export * from "./oauth";
export * from "./domains";

export * from "./certificates";

export * from "./analytics";
export * from "./forms";
export * from "./git-sync";
