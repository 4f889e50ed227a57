export * from "./accounts";
export * from "./buckets";
export * from "./jobs";
export * from "./files";
export * from "./oauth";
