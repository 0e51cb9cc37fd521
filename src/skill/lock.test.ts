import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { InputError } from "../core/errors.js";
import { emptyLock, readLock, writeLock } from "./lock.js";

const cleanups = cleanupsAfterEach();
let file: string;
beforeEach(async () => {
  file = join(await temporaryDirectoryIn(cleanups, "skillsmith-lock-"), "skillsmith-lock.json");
});

const entry = {
  source: "https://example.com/skills.git",
  url: "https://example.com/skills.git",
  ref: "main",
  commit: "a".repeat(40),
  path: "skills/pdf",
  contentHash: `sha256:${"b".repeat(64)}`,
  agents: ["claude-code"],
  mode: "copy",
  installedAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};

async function refusal(value: unknown): Promise<InputError> {
  await writeFile(file, JSON.stringify(value));
  const failure = await readLock(file).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(InputError);
  return failure as InputError;
}

describe("the skills lock's format", () => {
  it("writes skillsmith-skills-lock/1 and reads it back", async () => {
    await writeLock(file, { ...emptyLock(), skills: { pdf: entry as never } });
    const written = JSON.parse(await readFile(file, "utf8"));
    expect(written).toEqual({ format: "skillsmith-skills-lock/1", skills: { pdf: entry } });
    expect((await readLock(file)).skills.pdf).toEqual(entry);
  });

  it("reads a lock of an earlier version, with the name and the version apart", async () => {
    await writeFile(
      file,
      JSON.stringify({ format: "skillsmith-skills-lock", version: 1, skills: { pdf: entry } }),
    );
    expect(await readLock(file)).toEqual({
      format: "skillsmith-skills-lock/1",
      skills: { pdf: entry },
    });
  });

  it("refuses a later lock in either style, saying so", async () => {
    const older = await refusal({ format: "skillsmith-skills-lock", version: 2, skills: {} });
    expect(older.code).toBe("skill.lock-newer");
    const later = await refusal({ format: "skillsmith-skills-lock/2", skills: {} });
    expect(later.code).toBe("skill.lock-invalid");
    expect(later.message).toMatch(/later skillsmith/);
    expect(later.location).toMatchObject({ field: "format" });
  });

  it("refuses another kind of file on its format", async () => {
    const other = await refusal({ format: "skillsmith-run/1", skills: {} });
    expect(other.location).toMatchObject({ field: "format" });
  });
});
