// The build's part of site rules: `_redirects` and `_headers` at the published root are taken
// out of the deploy's files (they are configuration, never served) and compiled once.
import type { Deps } from "../../../core/context";
import { compileRules, HEADERS_FILE, MAX_RULES_FILE_BYTES, REDIRECTS_FILE, type CompiledRules, type RulesSummary } from "./syntax";

interface RuleFileInput {
  path: string;
  bytes?: Uint8Array | string;
  blobSha?: string;
}

/** Removes the rules files from `files` (in place) and compiles them; null when there are none. */
export async function takeSiteRules<F extends RuleFileInput>(deps: Deps, files: F[]): Promise<{ rules: CompiledRules; summary: RulesSummary } | null> {
  const texts: Record<string, string | null> = { [REDIRECTS_FILE]: null, [HEADERS_FILE]: null };
  let found = false;
  for (let i = files.length - 1; i >= 0; i--) {
    const f = files[i]!;
    if (f.path !== REDIRECTS_FILE && f.path !== HEADERS_FILE) continue;
    texts[f.path] = await readCapped(deps, f);
    files.splice(i, 1);
    found = true;
  }
  return found ? compileRules(texts[REDIRECTS_FILE]!, texts[HEADERS_FILE]!) : null;
}

/** A little past the cap, so the parser sees that the file is too big and says where it cut. */
async function readCapped(deps: Deps, f: RuleFileInput): Promise<string> {
  const limit = MAX_RULES_FILE_BYTES + 64 * 1024;
  if (f.bytes !== undefined) {
    const bytes = typeof f.bytes === "string" ? new TextEncoder().encode(f.bytes) : f.bytes;
    return new TextDecoder().decode(bytes.subarray(0, limit));
  }
  return new TextDecoder().decode(await deps.blobs.file(f.blobSha!.toLowerCase()).slice(0, limit).arrayBuffer());
}
