#!/usr/bin/env node
// `npm start`, the second half of the README's first command: put `skillsmith` on PATH (so that
// every command the README and the CLI print works verbatim in a new shell), then run the main
// job on the embedded default. Linking is `npm link`: the global prefix's bin folder, which is
// on PATH wherever npm itself is. SKILLSMITH_NO_LINK=1 skips it.
import { spawnSync } from "node:child_process";
import { chmodSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const main = join(root, "dist", "cli", "main.js");

/** What `skillsmith` in npm's global bin folder resolves to, or undefined. */
function linkedIn(prefix) {
  try {
    return realpathSync(join(prefix, "bin", "skillsmith"));
  } catch {
    return undefined;
  }
}

function link() {
  if (process.env.SKILLSMITH_NO_LINK === "1") return;
  // npm's global prefix (npm_config_prefix and npm's own configuration decide it), not whatever
  // PATH finds first: another link of this clone elsewhere on PATH does not make this one.
  const prefix = spawnSync("npm", ["prefix", "-g"], { encoding: "utf8" }).stdout.trim();
  // The build writes dist/ afresh without the execute bit; npm link sets it only when it links,
  // so a link left from an earlier clone at this path would point at a file no shell can run.
  chmodSync(main, 0o755);
  if (linkedIn(prefix) === realpathSync(main)) {
    process.stderr.write(`skillsmith is on PATH: ${join(prefix, "bin", "skillsmith")} → ${main}\n`);
    return;
  }
  // --ignore-scripts: `npm ci` has just built dist/; linking must not build it again.
  const result = spawnSync(
    "npm",
    ["link", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    { cwd: root, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" },
  );
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
