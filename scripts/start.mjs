#!/usr/bin/env node
// `npm start`, the second half of the README's first command: put `skillsmith` on PATH (so that
// every command the README and the CLI print works verbatim in a new shell), then run the main
// job on the embedded default. Linking is `npm link`: the global prefix's bin folder, which is
// on PATH wherever npm itself is. SKILLSMITH_NO_LINK=1 skips it.
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const main = join(root, "dist", "cli", "main.js");

/** The `skillsmith` PATH finds now, resolved through links, or undefined. */
function skillsmithOnPath() {
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (folder === "") continue;
    try {
      return realpathSync(join(folder, "skillsmith"));
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

function link() {
  if (process.env.SKILLSMITH_NO_LINK === "1") return;
  if (skillsmithOnPath() === realpathSync(main)) return;
  // --ignore-scripts: `npm ci` has just built dist/; linking must not build it again.
  const result = spawnSync(
    "npm",
    ["link", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    { cwd: root, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" },
  );
  const prefix = spawnSync("npm", ["prefix", "-g"], { encoding: "utf8" }).stdout.trim();
  if (result.status === 0) {
    process.stderr.write(`skillsmith is on PATH: ${join(prefix, "bin", "skillsmith")} → ${main}\n`);
    return;
  }
  const reason = /EACCES|permission denied/i.test(result.stderr)
    ? `no permission to write ${prefix}`
    : result.stderr.trim().split("\n").pop();
  process.stderr.write(
    [
      `could not put skillsmith on PATH with npm link (${reason}).`,
      "Use a prefix you own, then link again:",
      '  npm config set prefix ~/.local && npm link && export PATH="$HOME/.local/bin:$PATH"',
      `Until then, run it as: node ${main}`,
      "",
    ].join("\n"),
  );
}

link();
const quickstart = spawnSync(process.execPath, [main, "quickstart", ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exitCode = quickstart.status ?? 1;
