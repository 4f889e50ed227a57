import pkg from "../../package.json" with { type: "json" };

/** The running server's version (also the CLI's: one binary). */
export const serverVersion: string = pkg.version;
/** The newest released CLI/connector version; with one binary it equals the server's. */
export const clientVersion: string = pkg.version;
