import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { readCachedMeasurement } from "./measure.js";

const cleanups = cleanupsAfterEach();
let file: string;
beforeEach(async () => {
  file = join(await temporaryDirectoryIn(cleanups, "skillsmith-measure-"), "entry.json");
});

/** A measurement as the check writes it: 1 of 2 checks pass on the untouched repository. */
const untouched = {
  passed: 1,
  total: 2,
  passRatio: 0.5,
  flags: [],
  exitCode: 1,
  timedOut: false,
  durationMs: 40,
  output: "1 passed, 1 failed",
  erroredBeforeChecking: false,
  failures: [{ name: "test_b", message: "assert 1 == 2" }],
};

describe("readCachedMeasurement", () => {
  it("reads an entry written with the tag and one of an earlier version without it", async () => {
    await writeFile(file, JSON.stringify({ format: "skillsmith-check-measurement/1", untouched }));
    expect(await readCachedMeasurement(file)).toEqual({ untouched });
    await writeFile(file, JSON.stringify({ untouched, referenceNote: "a script" }));
    expect(await readCachedMeasurement(file)).toEqual({ untouched, referenceNote: "a script" });
  });

  it("drops a stored diagnosis: it is worked out again on every read", async () => {
    const diagnosis = { kind: "deliverable-missing", reason: "planted" };
    await writeFile(file, JSON.stringify({ untouched: { ...untouched, diagnosis } }));
    expect(await readCachedMeasurement(file)).toEqual({ untouched });
  });

  it.each([
    ["missing", undefined],
    ["not JSON", "{ half"],
    // Before: any file with an `untouched` key was trusted, its fields taken as they were.
    ["a pass ratio as text", JSON.stringify({ untouched: { ...untouched, passRatio: "1" } })],
    ["a pass ratio above 1", JSON.stringify({ untouched: { ...untouched, passRatio: 7 } })],
    ["no untouched run", JSON.stringify({ reference: untouched })],
    ["a later format", JSON.stringify({ format: "skillsmith-check-measurement/2", untouched })],
    ["another kind's file", JSON.stringify({ format: "skillsmith-task-check/1", untouched })],
  ])("does not trust a poisoned or foreign entry (%s): a miss", async (_case, text) => {
    if (text !== undefined) await writeFile(file, text);
    expect(await readCachedMeasurement(file)).toBeUndefined();
  });
});
