// Whether another process is still there, for the files that name their writer's pid (the serve
// lock, a restore's staging folder).

/** The process exists: signal 0 reaches it, or is refused because it belongs to another user (EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
