import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { InputError } from "../core/errors.js";
import { createBaseline, readBaseline } from "./baseline.js";

const cleanups = cleanupsAfterEach();
let file: string;
beforeEach(async () => {
  file = join(await temporaryDirectoryIn(cleanups, "skillsmith-baseline-"), "baseline.json");
});

const finding = { id: "0123456789abcdef", code: "pipe-to-shell", file: "SKILL.md", line: 6 };

describe("the audit baseline's format", () => {
  it("writes skillsmith-audit-baseline/1", () => {
    expect(createBaseline([], new Date(0))).toEqual({
      format: "skillsmith-audit-baseline/1",
      created: "1970-01-01T00:00:00.000Z",
      findings: [],
    });
  });

  it("reads a baseline of an earlier version, with the name and the version apart", async () => {
    await writeFile(
      file,
      JSON.stringify({ format: "skillsmith-audit-baseline", version: 1, findings: [finding] }),
    );
    expect(await readBaseline(file)).toEqual({
      format: "skillsmith-audit-baseline/1",
      findings: [finding],
    });
  });

  it("refuses a later baseline on its format", async () => {
    for (const value of [
      { format: "skillsmith-audit-baseline/2", findings: [] },
      { format: "skillsmith-audit-baseline", version: 2, findings: [] },
    ]) {
      await writeFile(file, JSON.stringify(value));
      const failure = await readBaseline(file).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InputError);
      expect((failure as InputError).location).toMatchObject({ field: "format" });
    }
  });
});
