// The PATH step of `npm start` (scripts/start.mjs), on its own so a test can run it against a
// temporary npm prefix: make the built CLI executable, then make `<prefix>/bin/skillsmith` resolve
// to it (npm link), or say how to do it by hand.
import { spawnSync } from "node:child_process";
import { chmodSync, realpathSync } from "node:fs";
import { join } from "node:path";

/** What `skillsmith` in the prefix's bin folder resolves to, or undefined. */
function linkedIn(prefix) {
  try {
    return realpathSync(join(prefix, "bin", "skillsmith"));
  } catch {
    return undefined;
  }
}

/**
 * Put `main` (a clone's dist/cli/main.js) on PATH as `skillsmith` in npm's global prefix.
 * `root` is the clone; `prefix` is npm's global prefix (`npm prefix -g` when absent); `write`
 * receives what a person should read. Answers whether `skillsmith` now resolves to `main`.
 */
export function putOnPath({ root, main, prefix, write = (text) => process.stderr.write(text) }) {
  // npm's global prefix (npm_config_prefix and npm's own configuration decide it), not whatever
  // PATH finds first: another link of this clone elsewhere on PATH does not make this one.
  const globalPrefix =
    prefix ?? spawnSync("npm", ["prefix", "-g"], { encoding: "utf8" }).stdout.trim();
  // The build writes dist/ afresh without the execute bit; npm link sets it only when it links,
  // so a link left from an earlier clone at this path would point at a file no shell can run.
  chmodSync(main, 0o755);
  const onPath = `skillsmith is on PATH: ${join(globalPrefix, "bin", "skillsmith")} → ${main}\n`;
  if (linkedIn(globalPrefix) === realpathSync(main)) {
    write(onPath);
    return true;
  }
  // --ignore-scripts: `npm ci` has just built dist/; linking must not build it again.
  const result = spawnSync(
    "npm",
    ["link", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
      env: { ...process.env, npm_config_prefix: globalPrefix },
    },
  );
  if (result.status === 0) {
    write(onPath);
    return true;
  }
  const reason = /EACCES|permission denied/i.test(result.stderr)
    ? `no permission to write ${globalPrefix}`
    : result.stderr.trim().split("\n").pop();
  write(
    [
      `could not put skillsmith on PATH with npm link (${reason}).`,
      "Use a prefix you own, then link again:",
      '  npm config set prefix ~/.local && npm link && export PATH="$HOME/.local/bin:$PATH"',
      `Until then, run it as: node ${main}`,
      "",
    ].join("\n"),
  );
  return false;
}
