#!/usr/bin/env bun
// Entry point of the single binary: `pier serve`, `pier admin ...`, and the client commands.
import { runCli } from "./cli/index";

await runCli(process.argv.slice(2));
