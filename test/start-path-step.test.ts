/**
 * `npm start`'s PATH step (scripts/path-step.mjs) after a fresh build, against a temporary npm
 * prefix: a link left from an earlier clone at the same path already points at dist/cli/main.js,
 * but the build wrote that file afresh without the execute bit, so a new shell answered
 * "Permission denied" (issue 28, item 1). After the step, `skillsmith --version` works in a new
 * shell with nothing but the prefix's bin folder and the system's on PATH.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { putOnPath } from "../scripts/path-step.mjs";

const repositoryRoot = resolve(import.meta.dirname, "..");
const builtCli = join(repositoryRoot, "dist", "cli", "main.js");
const version = (
  JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as { version: string }
).version;

let folder: string;
let clone: string;
let prefix: string;
let main: string;

/**
 * `skillsmith --version` in a new shell whose PATH is the prefix's bin and a folder holding only
 * `node`: a `skillsmith` installed on this machine (in /usr/bin, beside node) must not answer for
 * the link under test (bash goes on searching PATH past a file it cannot execute).
 */
function newShellVersion(): { status: number | null; stdout: string; stderr: string } {
  return spawnSync("/bin/bash", ["-c", "cd / && skillsmith --version"], {
    encoding: "utf8",
    env: { HOME: folder, PATH: `${join(prefix, "bin")}:${join(folder, "node-only")}` },
  });
}

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "skillsmith-path-step-"));
  clone = join(folder, "clone");
  prefix = join(folder, "prefix");
  main = join(clone, "dist", "cli", "main.js");
  await mkdir(dirname(main), { recursive: true });
  await mkdir(join(prefix, "bin"), { recursive: true });
  await mkdir(join(folder, "node-only"));
  await symlink(process.execPath, join(folder, "node-only", "node"));
  await writeFile(
    join(clone, "package.json"),
    JSON.stringify({ name: "skillsmith", version, bin: { skillsmith: "dist/cli/main.js" } }),
  );
  // The clone's freshly built entry point: this checkout's built CLI behind a one-line module,
  // written as a build writes it, mode 0644.
  await writeFile(
    main,
    `#!/usr/bin/env node\nimport ${JSON.stringify(pathToFileURL(builtCli).href)};\n`,
    { mode: 0o644 },
  );
  await chmod(main, 0o644);
  // The earlier clone's link, at the same path.
  await symlink(main, join(prefix, "bin", "skillsmith"));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe.skipIf(!existsSync(builtCli))("npm start's PATH step [needs dist/, npm run build]", () => {
  it("makes a link left at the same path work: the built file gets its execute bit", async () => {
    // As the issue found it: the link resolves, the file cannot be run.
    const before = newShellVersion();
    expect(before.status).toBe(126);
    expect(before.stderr).toMatch(/Permission denied/);

    const said: string[] = [];
    const linked = putOnPath({ root: clone, main, prefix, write: (text) => said.push(text) });

    expect(linked).toBe(true);
    expect(said.join("")).toContain(`skillsmith is on PATH: ${join(prefix, "bin", "skillsmith")}`);
    expect((await stat(main)).mode & 0o111).toBe(0o111);
    const after = newShellVersion();
    expect(after.status, after.stderr).toBe(0);
    expect(after.stdout.trim()).toBe(version);
  });

  it("says how to link by hand when the prefix cannot be written, and answers false", async () => {
    await rm(join(prefix, "bin", "skillsmith"));
    // A prefix that is a file: npm link cannot make its bin folder.
    const blocked = join(folder, "not-a-folder");
    await writeFile(blocked, "");
    const said: string[] = [];
    const linked = putOnPath({
      root: clone,
      main,
      prefix: blocked,
      write: (text) => said.push(text),
    });
    expect(linked).toBe(false);
    expect(said.join("")).toContain("could not put skillsmith on PATH with npm link");
    expect(said.join("")).toContain(`Until then, run it as: node ${main}`);
  }, 120_000);
});
