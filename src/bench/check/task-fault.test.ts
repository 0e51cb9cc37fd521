import { describe, expect, it } from "vitest";
import type { RunResult } from "../store/results.js";
import { decisiveLines, pickLines, taskFault } from "./task-fault.js";

const completed = (passRatio: number, decisive: string[] = [], flags: string[] = []) => ({
  status: "completed",
  passRatio,
  flags,
  decisive,
});

describe("whose fault a failed task control is", () => {
  const base = { hasSolution: true, workdir: "/app", crashed: false };

  it("a permission error on a folder skillsmith mounts is skillsmith's", () => {
    expect(
      taskFault({
        ...base,
        untouched: completed(
          0,
          ["verifier: mkdir: cannot create directory '/logs/verifier': Permission denied"],
          ["reward-missing"],
        ),
        oracle: {
          ...completed(0),
          status: "agent_error",
          decisive: ["agent: cp: cannot create regular file '/app/out.txt': Permission denied"],
        },
      }),
    ).toBe("skillsmith");
  });

  it("an interpreter or module the image lacks is the environment's", () => {
    for (const line of [
      "verifier: /tests/test.sh: line 3: uvx: command not found",
      "verifier: ModuleNotFoundError: No module named 'pandas'",
      "verifier: /tests/test.sh: 2: pytest: not found",
    ]) {
      expect(
        taskFault({
          ...base,
          untouched: completed(0, [line], ["reward-missing"]),
          oracle: completed(0, [line], ["reward-missing"]),
        }),
      ).toBe("environment");
    }
  });

  it("a test.sh that writes no reward in either control, with no such cause, is the verifier's", () => {
    expect(
      taskFault({
        ...base,
        untouched: completed(0, [], ["reward-missing"]),
        oracle: completed(0, [], ["reward-missing"]),
      }),
    ).toBe("verifier");
  });

  it("a solve.sh that fails or falls short is the oracle's; a missing one too", () => {
    expect(
      taskFault({
        ...base,
        untouched: completed(0),
        oracle: { ...completed(0, ["agent: TODO"]), status: "agent_error" },
      }),
    ).toBe("oracle");
    expect(taskFault({ ...base, untouched: completed(0), oracle: completed(0.5) })).toBe("oracle");
    expect(taskFault({ ...base, hasSolution: false, untouched: completed(0) })).toBe("oracle");
  });

  it("an untouched directory that already passes is the verifier's", () => {
    expect(taskFault({ ...base, untouched: completed(1), oracle: completed(1) })).toBe("verifier");
  });

  it("a control that could not be carried out at all is skillsmith's", () => {
    expect(taskFault({ ...base, crashed: true, untouched: completed(0) })).toBe("skillsmith");
  });
});

describe("the decisive lines of a control run", () => {
  it("keeps error lines, else the last lines", () => {
    expect(pickLines("a\nb\nTraceback (most recent call last):\nc\nValueError: bad\n")).toEqual([
      "Traceback (most recent call last):",
      "ValueError: bad",
    ]);
    expect(pickLines("1\n2\n3\n4\n5\n6\n7\n8\n")).toEqual(["3", "4", "5", "6", "7", "8"]);
  });

  it("shows solve.sh's own words when it failed, and the verifier's when nothing scored", () => {
    const result = {
      status: "agent_error",
      passRatio: 0,
      flags: ["reward-missing"],
      trajectory: {
        error: "solve.sh exited with 1",
        events: [
          { type: "tool_call", id: "solve-1" },
          {
            type: "tool_result",
            isError: true,
            output: "starting\n--- stderr ---\nTODO: write the solution\n",
          },
        ],
      },
      verifier: { output: "bash: uvx: command not found\n" },
    } as unknown as RunResult;
    expect(decisiveLines(result)).toEqual([
      "agent: solve.sh exited with 1",
      "agent: starting",
      "agent: TODO: write the solution",
      "verifier: bash: uvx: command not found",
    ]);
  });
});
