import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxV1 } from "../env/index.js";
import { hidingMounts } from "./python-exec.js";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

const sandbox = (kind: SandboxV1["kind"]): SandboxV1 => ({
  specificationVersion: "v1",
  kind,
  exec: () => Promise.reject(new Error("not run")),
});

describe("hidingMounts", () => {
  it("covers folders with an empty folder and files with an empty file, at their real paths", async () => {
    // Outside /tmp (the sandbox's own, so paths there need no hiding): the ignored test-output/,
    // or, for a checkout that itself lives under /tmp, a folder in the home directory.
    const repositoryOutput = join(import.meta.dirname, "..", "..", "test-output");
    const output = repositoryOutput.startsWith("/tmp/")
      ? join(homedir(), ".skillsmith-test-output")
      : repositoryOutput;
    await mkdir(output, { recursive: true });
    const base = await mkdtemp(join(output, "hiding-"));
    folders.push(base);
    const scratch = await mkdtemp(join(tmpdir(), "skillsmith-hiding-scratch-"));
    folders.push(scratch);
    await mkdir(join(base, "dataset"));
    await writeFile(join(base, "dataset", "tests.jsonl"), "secret");
    await symlink(join(base, "dataset"), join(base, "link"));
    const mounts = hidingMounts(
      sandbox("local"),
      [join(base, "link"), join(base, "dataset", "tests.jsonl"), join(base, "missing"), "/"],
      scratch,
    );
    expect(mounts).toEqual([
      { hostPath: join(scratch, "folder"), sandboxPath: join(base, "dataset"), readOnly: true },
      {
        hostPath: join(scratch, "file"),
        sandboxPath: join(base, "dataset", "tests.jsonl"),
        readOnly: true,
      },
    ]);
    expect(readdirSync(join(scratch, "folder"))).toEqual([]);
    expect(statSync(join(scratch, "file")).isFile()).toBe(true);
    expect(readFileSync(join(scratch, "file"), "utf8")).toBe("");
  });

  it("has nothing to hide under the sandbox's own /tmp, and nothing to hide with when unsafe", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "skillsmith-hiding-scratch-"));
    folders.push(scratch);
    expect(hidingMounts(sandbox("local"), [scratch], scratch)).toEqual([]);
    expect(hidingMounts(sandbox("unsafe"), [homedir()], scratch)).toEqual([]);
    expect(existsSync(join(scratch, "folder"))).toBe(false);
  });
});
