// Rules for well-known keys of bucket.metadata, checked on create and PATCH. Other features own
// the meaning of their keys (publication_forms belongs to forms) and register a check here, so
// buckets need not import them (that would make a cycle: they already import buckets).
export type MetadataRule = (value: unknown) => void;

const rules = new Map<string, MetadataRule>();

/** Register the check for one metadata key; it throws ApiError on a bad value. */
export function registerMetadataRule(key: string, rule: MetadataRule): void {
  rules.set(key, rule);
}

export function checkMetadata(metadata: Record<string, unknown> | undefined): void {
  if (!metadata) return;
  for (const [key, rule] of rules) if (metadata[key] !== undefined) rule(metadata[key]);
}
