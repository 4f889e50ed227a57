#!/usr/bin/env bun
// Entry point of the single binary: `pier serve`, `pier admin ...`, and the client commands.
// A serving worker (started by `pier serve --workers N`) loads only the site server.
import { WORKER_ENV } from "./worker-env";

if (process.env[WORKER_ENV]) await (await import("./serving-process")).runServingWorker();
else await (await import("./cli/index")).runCli(process.argv.slice(2));
