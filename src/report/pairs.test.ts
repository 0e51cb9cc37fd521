import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runResult } from "../../test/support/results.js";
import type { Trajectory, TrajectoryEvent } from "../agents/types.js";
import { ResultsStore, type RunResult } from "../bench/store/results.js";
import {
  armView,
  EVENT_TEXT_LIMIT,
  loadPairView,
  loadPairViews,
  pairPath,
  parsePairPath,
} from "./pairs.js";

function trajectory(events: TrajectoryEvent[], skill?: string): Trajectory {
  return {
    format: "skillsmith-trajectory/1",
    harness: "builtin",
    events,
    ...(skill === undefined ? {} : { skill: { name: skill, installedAt: ".agents/skills" } }),
    skillsShown: skill === undefined ? [] : [skill],
    skillsShownSource: "system-prompt",
    skillActivated: false,
    usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 },
    wallTimeMs: 1,
    status: "completed",
    rawLog: "",
  };
}

function result(overrides: Partial<RunResult> & Pick<RunResult, "arm">): RunResult {
  return runResult("c", "s", "r1", overrides.arm, 1, {
    passed: 1,
    total: 1,
    checks: [{ name: "t", status: "pass" }],
    trajectory: trajectory([]),
    ...overrides,
  });
}

describe("pair paths", () => {
  it("round-trips parts holding slashes, spaces and markup", () => {
    const ref = { config: "a/b", skill: "<x> y", requirement: "r#1?", repeat: 3 };
    const path = pairPath(ref);
    expect(path.split("/")).toHaveLength(4);
    expect(path).toBe("a%2Fb/%3Cx%3E%20y/r%231%3F/3");
    expect(parsePairPath(path)).toEqual(ref);
  });

  it("rejects paths that are not pairs", () => {
    expect(parsePairPath("a/b/c")).toBeUndefined();
    expect(parsePairPath("a/b/c/x")).toBeUndefined();
    expect(parsePairPath("a/b/%E0%A4%A/1")).toBeUndefined();
    expect(parsePairPath("/b/c/1")).toBeUndefined();
  });
});

/** The with-skill arm of a run whose one tool call applied `patch`. */
function patchView(patch: string) {
  return armView(
    result({
      arm: "with",
      trajectory: trajectory([
        { type: "tool_call", id: "1", name: "apply_patch", input: { patch } },
        { type: "tool_result", id: "1", output: "", isError: false },
      ]),
    }),
  );
}

describe("armView: files changed from tool calls", () => {
  it("splits a git patch per file, including a deletion", () => {
    const patch = [
      "diff --git a/one.py b/one.py",
      "--- a/one.py",
      "+++ b/one.py",
      "@@ -1 +1 @@",
      "-old",
      "+new",
      "diff --git a/gone.txt b/gone.txt",
      "deleted file mode 100644",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
    ].join("\n");
    const view = patchView(patch);
    expect(view.files).toEqual([
      {
        path: "one.py",
        kind: "patch",
        diff: "@@ -1 +1 @@\n-old\n+new",
        tool: "apply_patch",
        failed: false,
      },
      {
        path: "gone.txt",
        kind: "patch",
        diff: "@@ -1 +0,0 @@\n-bye",
        tool: "apply_patch",
        failed: false,
      },
    ]);
    expect(view.events[0]).toMatchObject({ type: "tool_call", patch });
  });

  it("names a changed file whose path holds spaces without git's trailing tab", () => {
    // git prints "--- a/read me.md<TAB>" for a name with a space (checked against git 2.39).
    const patch = [
      "diff --git a/docs/read me.md b/docs/read me.md",
      "--- a/docs/read me.md\t",
      "+++ b/docs/read me.md\t",
      "@@ -1 +1 @@",
      "--- old rule",
      "+new rule",
    ].join("\n");
    const view = patchView(patch);
    expect(view.files).toEqual([
      {
        path: "docs/read me.md",
        kind: "patch",
        diff: "@@ -1 +1 @@\n--- old rule\n+new rule",
        tool: "apply_patch",
        failed: false,
      },
    ]);
  });

  it("reads Claude Code writes and edits, codex change lists, and marks failed calls", () => {
    const view = armView(
      result({
        arm: "without",
        trajectory: trajectory([
          {
            type: "tool_call",
            id: "w",
            name: "Write",
            input: { file_path: "a.py", content: "x = 1\ny = 2\n" },
          },
          {
            type: "tool_call",
            id: "e",
            name: "Edit",
            input: { file_path: "a.py", old_string: "x = 1", new_string: "x = 3" },
          },
          { type: "tool_result", id: "e", output: "no match", isError: true },
          {
            type: "tool_call",
            id: "m",
            name: "MultiEdit",
            input: { file_path: "b.py", edits: [{ old_string: "p", new_string: "q" }] },
          },
          {
            type: "tool_call",
            id: "c",
            name: "apply_patch",
            input: { changes: [{ path: "c.py", kind: "add" }] },
          },
          { type: "tool_call", id: "s", name: "Bash", input: { command: "sed -i s/a/b/ d.py" } },
        ]),
      }),
    );
    expect(view.files.map((file) => [file.path, file.kind, file.diff, file.failed])).toEqual([
      ["a.py", "write", "+x = 1\n+y = 2", false],
      ["a.py", "edit", "-x = 1\n+x = 3", true],
      ["b.py", "edit", "@@ edit 1\n-p\n+q", false],
      ["c.py", "listed", undefined, false],
    ]);
    expect(view.shellCalls).toBe(1);
    // The control arm never looks for an activation.
    expect(view.activationIndex).toBeUndefined();
  });
});

describe("armView: activation, truncation, broken trajectories", () => {
  it("marks the call that activated the skill and only that one", () => {
    const view = armView(
      result({
        arm: "with",
        skill: "money",
        trajectory: trajectory(
          [
            { type: "assistant_text", text: "let me look" },
            { type: "tool_call", id: "1", name: "Read", input: { file_path: "src/app.py" } },
            {
              type: "tool_call",
              id: "2",
              name: "Read",
              input: { file_path: ".claude/skills/money/SKILL.md" },
            },
            { type: "tool_call", id: "3", name: "Skill", input: { skill: "money" } },
          ],
          "money",
        ),
      }),
    );
    expect(view.activationIndex).toBe(2);
    expect(view.skillActivated).toBe(true);
    expect(view.events.map((event) => "activation" in event)).toEqual([false, false, true, false]);
  });

  it("truncates long text and says how much was left out", () => {
    const long = "a".repeat(EVENT_TEXT_LIMIT + 1234);
    const view = armView(
      result({ arm: "with", trajectory: trajectory([{ type: "assistant_text", text: long }]) }),
    );
    const shown = view.events[0] as { text: string };
    expect(shown.text.startsWith("a".repeat(EVENT_TEXT_LIMIT))).toBe(true);
    expect(shown.text).toContain("1,234 more characters not shown");
    const short = armView(
      result({
        arm: "with",
        trajectory: trajectory([{ type: "assistant_text", text: "abcdefghijkl" }]),
      }),
      { textLimit: 10 },
    );
    expect((short.events[0] as { text: string }).text).toBe(
      "abcdefghij\n[… 2 more characters not shown]",
    );
  });

  it("carries the verifier's record and what each flag means, whole for a flagged run", () => {
    const output = `${"collecting ...\n".repeat(40)}E   ModuleNotFoundError: No module named 'helpers'\n`;
    const flagged = armView(
      result({
        arm: "with",
        flags: ["collection-error", "from-the-future"],
        verifier: { output, exitCode: 2, durationMs: 12, source: "junit", evidence: ["e1"] },
      }),
      { textLimit: 10, verifierOutputLimit: 10 },
    );
    // Flagged: the whole stored output, whatever the limits (it is what explains the flag).
    expect(flagged.verifier).toEqual({
      output,
      exitCode: 2,
      durationMs: 12,
      source: "junit",
      evidence: ["e1"],
    });
    expect(flagged.flagDetails.map((flag) => [flag.id, flag.effect, flag.label])).toEqual([
      ["collection-error", "verifier-side", "collection error"],
      // Unknown to this version: shown as unmeasured, never as a result.
      ["from-the-future", "unmeasured", "from-the-future"],
    ]);
    const clean = armView(
      result({ arm: "with", verifier: { output: "1234567890abc", exitCode: 0, durationMs: 1 } }),
      { verifierOutputLimit: 10 },
    );
    expect(clean.verifier?.output).toBe("1234567890\n[… 3 more characters not shown]");
    expect(clean.flagDetails).toEqual([]);
  });

  it("keeps checks and usage when the stored trajectory cannot be parsed", () => {
    const view = armView(result({ arm: "with", trajectory: { version: 2 } }));
    expect(view.trajectoryProblem).toMatch(/^trajectory format/);
    expect(view.events).toEqual([]);
    expect(view.checks).toEqual([{ name: "t", status: "pass" }]);
  });
});

describe("loadPairViews", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("pairs the two arms of each key from a real store, and a half-finished pair has one arm", async () => {
    dir = await mkdtemp(join(tmpdir(), "pairs-"));
    const store = ResultsStore.open(dir);
    store.recordResult(result({ arm: "without", passRatio: 0, passed: 0 }));
    store.recordResult(result({ arm: "with" }));
    store.recordResult(result({ arm: "with", requirement: "r2" }));
    store.close();
    const pairs = loadPairViews(dir);
    expect(pairs.map((pair) => [pair.id, pair.without?.passed, pair.with?.passed])).toEqual([
      ["c/s/r1/1", 0, 1],
      ["c/s/r2/1", undefined, 1],
    ]);
    expect(loadPairView(dir, { config: "c", skill: "s", requirement: "r2", repeat: 1 })?.id).toBe(
      "c/s/r2/1",
    );
    expect(
      loadPairView(dir, { config: "c", skill: "s", requirement: "r3", repeat: 1 }),
    ).toBeUndefined();
  });
});
