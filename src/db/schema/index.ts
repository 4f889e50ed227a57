export * from "./accounts";
export * from "./buckets";
export * from "./jobs";
export * from "./oauth";
