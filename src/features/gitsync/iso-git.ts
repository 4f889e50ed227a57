// Loaded by a sync's first git call: a serving worker, and a server that syncs nothing, never load
// it (a megabyte of heap and ~1,800 functions that every garbage collection would walk).
let isoGitModule: Promise<typeof import("isomorphic-git").default> | null = null;
export const isoGit = () => (isoGitModule ??= import("isomorphic-git").then((m) => m.default));
