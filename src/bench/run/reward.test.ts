import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readCtrfChecks, readHarborReward } from "./reward.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "skillsmith-reward-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const write = (name: string, text: string) => writeFile(join(folder, name), text);

describe("readHarborReward", () => {
  it("prefers reward.json over reward.txt", async () => {
    await write("reward.json", '{"reward": 0.75}');
    await write("reward.txt", "0\n");
    expect(await readHarborReward(folder)).toEqual({
      kind: "reward",
      value: 0.75,
      file: "reward.json",
    });
  });

  it("reads reward.txt when there is no JSON, and a JSON object's only number", async () => {
    await write("reward.txt", " 1\n");
    expect(await readHarborReward(folder)).toMatchObject({ value: 1, file: "reward.txt" });
    await write("reward.json", '{"accuracy": 0.25}');
    expect(await readHarborReward(folder)).toMatchObject({ value: 0.25, file: "reward.json" });
  });

  it("clamps a reward outside 0..1 and says so", async () => {
    await write("reward.txt", "1.5");
    expect(await readHarborReward(folder)).toEqual({
      kind: "reward",
      value: 1,
      file: "reward.txt",
      note: "reward.txt holds 1.5, outside 0..1: clamped to 1",
    });
  });

  it("is missing, with the reason, for no file, text that is no number, or several named rewards", async () => {
    expect(await readHarborReward(folder)).toEqual({
      kind: "missing",
      detail: "the verifier wrote neither reward.json nor reward.txt",
    });
    await write("reward.txt", "passed");
    expect(await readHarborReward(folder)).toMatchObject({
      kind: "missing",
      detail: expect.stringContaining("reward.txt holds no number"),
    });
    await write("reward.txt", "");
    expect(await readHarborReward(folder)).toMatchObject({ kind: "missing" });
    await write("reward.json", '{"a": 1, "b": 0}');
    expect(await readHarborReward(folder)).toEqual({
      kind: "missing",
      detail: 'reward.json has no "reward" number (keys: a, b)',
    });
    await write("reward.json", "{not json");
    expect(await readHarborReward(folder)).toMatchObject({ kind: "missing" });
  });
});

describe("readCtrfChecks", () => {
  it("maps CTRF statuses to checks", async () => {
    await write(
      "ctrf.json",
      JSON.stringify({
        results: {
          tool: { name: "pytest" },
          tests: [
            { name: "a", status: "passed", duration: 1 },
            { name: "b", status: "failed", message: "assert 1 == 2" },
            { name: "c", status: "skipped" },
            { name: "d", status: "other" },
          ],
        },
      }),
    );
    expect(await readCtrfChecks(folder)).toEqual([
      { name: "a", status: "pass" },
      { name: "b", status: "fail", message: "assert 1 == 2" },
      { name: "c", status: "skip" },
      { name: "d", status: "error" },
    ]);
  });

  it("is undefined when absent or not a CTRF report", async () => {
    expect(await readCtrfChecks(folder)).toBeUndefined();
    await write("ctrf.json", '{"tests": []}');
    expect(await readCtrfChecks(folder)).toBeUndefined();
  });
});

describe("a pass/fail list beside the reward (_test_results.json)", () => {
  it("is read as checks when there is no CTRF report, and a CTRF report wins", async () => {
    await write(
      "_test_results.json",
      JSON.stringify({ passed: ["File exists: agent.py"], failed: ["Uses the skill's pattern"] }),
    );
    expect(await readCtrfChecks(folder)).toEqual([
      { name: "File exists: agent.py", status: "pass" },
      { name: "Uses the skill's pattern", status: "fail" },
    ]);
    await write(
      "ctrf.json",
      JSON.stringify({ results: { tests: [{ name: "only", status: "passed" }] } }),
    );
    expect(await readCtrfChecks(folder)).toEqual([{ name: "only", status: "pass" }]);
  });

  it("a malformed list is no detail, never checks", async () => {
    await write("_test_results.json", JSON.stringify({ passed: "all of them" }));
    expect(await readCtrfChecks(folder)).toBeUndefined();
  });
});
