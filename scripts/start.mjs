#!/usr/bin/env node
// `npm start`, the second half of the README's first command: put `skillsmith` on PATH (so that
// every command the README and the CLI print works verbatim in a new shell), then run the main
// job on the embedded default. Linking is `npm link`: the global prefix's bin folder, which is
// on PATH wherever npm itself is (scripts/path-step.mjs). SKILLSMITH_NO_LINK=1 skips it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { putOnPath } from "./path-step.mjs";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const main = join(root, "dist", "cli", "main.js");

if (process.env.SKILLSMITH_NO_LINK !== "1") putOnPath({ root, main });
const quickstart = spawnSync(process.execPath, [main, "quickstart", ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exitCode = quickstart.status ?? 1;
