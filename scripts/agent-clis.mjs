#!/usr/bin/env node
// Installs the pinned agent CLIs (Claude Code, Codex) that the tests drive, once, into the cache
// directory src/agents/cli-locate.ts looks in. They are not devDependencies: 760 MB that a user
// who builds, validates or reads skillsmith never needs. Run by `npm test` (pretest) and .ci/run;
// `npm run agent-clis` runs it by hand. Needs dist/ (the pins live in one place, cli-locate.ts).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const { AGENT_CLIS, agentCliCachePrefix } = await import("../dist/agents/cli-locate.js");

let failed = 0;
for (const [binary, { packageName, version }] of Object.entries(AGENT_CLIS)) {
  const prefix = agentCliCachePrefix(binary);
  const program = join(prefix, "node_modules", ".bin", binary);
  if (existsSync(program)) continue;
  process.stderr.write(`agent-clis: installing ${packageName}@${version} into ${prefix}\n`);
  mkdirSync(prefix, { recursive: true });
  // A package.json of its own keeps npm from walking up into an enclosing project.
  writeFileSync(join(prefix, "package.json"), '{ "private": true }\n');
  const result = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      // Claude Code declares Node >= 22 but the pinned version runs on Node 20 in our tests;
      // only errors are worth a newcomer's attention here.
      "--loglevel=error",
      `${packageName}@${version}`,
    ],
    { stdio: "inherit" },
  );
  if (result.status !== 0 || !existsSync(program)) {
    failed += 1;
    process.stderr.write(
      `agent-clis: ${packageName}@${version} did not install; the tests that drive ${binary} will be skipped\n`,
    );
  }
}
// A failed download is not a failed build: the tests that need the CLI skip, naming it.
process.exitCode = 0;
if (failed > 0) process.stderr.write(`agent-clis: ${failed} CLI(s) missing\n`);
