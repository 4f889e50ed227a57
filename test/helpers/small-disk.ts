// A small tmpfs for the disk-full tests: mounted at import time (it decides whether the file's
// tests run), filled to the last byte on demand, freed, and unmounted after. Mounting needs root:
// elsewhere `mounted` is false and the file says, once, why it skips.
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SmallDisk {
  mounted: boolean;
  mountPoint: string;
  /** Writes zeros until the file system refuses: not a byte left for Pier. */
  fill(): void;
  /** Removes what fill() wrote. */
  free(): void;
  unmount(): void;
}

export function mountSmallDisk(sizeMiB: number, testFile: string, what: string): SmallDisk {
  const mountPoint = mkdtempSync(join(tmpdir(), "pier-diskfull-"));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m`, "tmpfs", mountPoint], { encoding: "utf8" });
  const mounted = mount.status === 0;
  if (!mounted) {
    console.warn(
      `SKIPPED ${testFile}: cannot mount a tmpfs here (${(mount.stderr || mount.error?.message || "").trim()}); run the suite as root to test ${what}`,
    );
    rmSync(mountPoint, { recursive: true, force: true });
  }
  const filler = join(mountPoint, "filler");
  return {
    mounted,
    mountPoint,
    fill() {
      const fd = openSync(filler, "a");
      try {
        for (const size of [1024 * 1024, 4096, 1]) {
          const chunk = new Uint8Array(size);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (e) {
            if ((e as { code?: string }).code !== "ENOSPC") throw e;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free: () => rmSync(filler, { force: true }),
    unmount() {
      spawnSync("umount", ["-l", mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}
