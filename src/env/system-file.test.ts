import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSkillsmithError } from "../core/errors.js";
import { readSystemFile, readSystemFileSync } from "./system-file.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "skillsmith-system-file-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("readSystemFile", () => {
  it("reads a file, and says undefined for a missing one or one under a non-folder", async () => {
    await writeFile(join(folder, "present"), "oom_kill 2\n");
    expect(await readSystemFile(join(folder, "present"))).toBe("oom_kill 2\n");
    expect(readSystemFileSync(join(folder, "present"))).toBe("oom_kill 2\n");
    expect(await readSystemFile(join(folder, "absent"))).toBeUndefined();
    expect(readSystemFileSync(join(folder, "present", "below"))).toBeUndefined();
  });

  it("raises an infrastructure error naming the file when it is there but unreadable", async () => {
    // Tests run as root, so EACCES cannot be provoked: a folder where a file is expected gives
    // EISDIR, which is neither ENOENT nor ENOTDIR.
    const path = join(folder, "memory.events");
    await mkdir(path);
    const failure = await readSystemFile(path).catch((error: unknown) => error);
    expect(isSkillsmithError(failure, "infrastructure")).toBe(true);
    expect((failure as Error).message).toContain(path);
    expect((failure as Error).message).toContain("EISDIR");
    expect(() => readSystemFileSync(path)).toThrow(path);
  });
});
