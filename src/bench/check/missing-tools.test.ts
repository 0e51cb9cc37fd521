import { describe, expect, it } from "vitest";
import { describeToolNeeds, toolNeeds } from "./missing-tools.js";

const path = "/nonexistent-bin";

describe("toolNeeds", () => {
  it("names the tool when every failing check fails for its absence", () => {
    const needs = toolNeeds(
      [
        {
          name: "test_build",
          message: "FileNotFoundError: [Errno 2] No such file or directory: 'go'",
        },
        { name: "test_vet", message: "/bin/sh: 1: go: not found" },
        { name: "test_kustomize", message: "AssertionError: kustomize not installed" },
      ],
      ["kustomize"],
      path,
    );
    expect(needs).toEqual([
      { tool: "go", checks: 2 },
      { tool: "kustomize", checks: 1 },
    ]);
    expect(describeToolNeeds(needs)).toBe("2 checks need go, 1 check needs kustomize");
  });

  it("says nothing when any failing check fails for another reason", () => {
    expect(
      toolNeeds(
        [
          {
            name: "test_build",
            message: "FileNotFoundError: [Errno 2] No such file or directory: 'go'",
          },
          { name: "test_word", message: "AssertionError: 'retry' not in source" },
        ],
        [],
        path,
      ),
    ).toEqual([]);
    expect(toolNeeds([], ["go"], path)).toEqual([]);
  });

  it("does not blame a program that is on PATH, nor a missing data file", () => {
    expect(
      toolNeeds([{ name: "t", message: "No such file or directory: 'sh'" }], [], "/bin:/usr/bin"),
    ).toEqual([]);
    expect(
      toolNeeds(
        [
          {
            name: "t",
            message: "FileNotFoundError: [Errno 2] No such file or directory: 'config/app.yaml'",
          },
        ],
        [],
        path,
      ),
    ).toEqual([]);
    expect(
      toolNeeds(
        [{ name: "t", message: "ModuleNotFoundError: No module named 'pdm'" }],
        ["pdm"],
        path,
      ),
    ).toEqual([{ tool: "pdm", checks: 1 }]);
  });
});
