// A folder tree's entries, depth first, without recursion. A folder that cannot be read (removed
// meanwhile, no permission) is skipped: callers measure trees that other code changes as they walk.
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";

export async function* walkTree(root: string): AsyncGenerator<{ path: string; entry: Dirent }> {
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(path);
      yield { path, entry };
    }
  }
}
