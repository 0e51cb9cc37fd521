import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../core/errors.js";
import { UnsafeSandbox } from "../env/sandbox/unsafe.js";
import { createHarness } from "./registry.js";
import { patchesFromDirectory, solutionsFromDirectory } from "./replay.js";
import type { AgentRunRequest } from "./types.js";

/** Written by hand: turns "hullo" into "Hello" in greeting.txt. */
const FIX = `--- a/greeting.txt
+++ b/greeting.txt
@@ -1 +1 @@
-hullo, world
+Hello, world
`;
/** A hunk whose context does not exist in the file. */
const BROKEN = `--- a/greeting.txt
+++ b/greeting.txt
@@ -1 +1 @@
-goodbye
+farewell
`;

let root: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-replay-"));
  workspace = join(root, "ws");
  await mkdir(workspace);
  await writeFile(join(workspace, "greeting.txt"), "hullo, world\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function request(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  return {
    task: "fix it",
    workspace,
    taskId: "t1",
    model: { spec: "none" },
    limits: { timeoutMs: 10_000 },
    sandbox: new UnsafeSandbox(),
    ...overrides,
  };
}

const greeting = () => readFile(join(workspace, "greeting.txt"), "utf8");

describe("replay", () => {
  it("applies the patch recorded for the task and arm", async () => {
    const patches = join(root, "patches");
    await mkdir(join(patches, "t1"), { recursive: true });
    await writeFile(join(patches, "t1", "with-skill.diff"), FIX);
    await writeFile(join(patches, "t1", "without-skill.diff"), "");
    const harness = createHarness("replay", { patchFor: patchesFromDirectory(patches) });

    const without = await harness.run(request());
    expect(without).toMatchObject({ status: "completed", arm: "without-skill", events: [] });
    expect(await greeting()).toBe("hullo, world\n");

    const withSkill = await harness.run(request({ skillPath: "/unused", arm: "with-skill" }));
    expect(withSkill.status).toBe("completed");
    expect(withSkill.harness).toBe("replay");
    expect(withSkill.events.map((event) => event.type)).toEqual(["tool_call", "tool_result"]);
    expect(await greeting()).toBe("Hello, world\n");
  });

  it("reports a patch that does not apply as agent_error with git's message", async () => {
    const harness = createHarness("replay", { patchFor: () => BROKEN });
    const trajectory = await harness.run(request());
    expect(trajectory.status).toBe("agent_error");
    expect(trajectory.error).toMatch(/^patch does not apply: .*patch failed: greeting\.txt:1/s);
    expect(await greeting()).toBe("hullo, world\n");
  });

  it("reports a missing recording as agent_error and needs a task id", async () => {
    const harness = createHarness("replay", { patchFor: () => undefined });
    expect((await harness.run(request())).error).toBe(
      'no recorded patch for task "t1", arm "without-skill"',
    );
    const { taskId: _taskId, ...withoutTaskId } = request();
    await expect(harness.run(withoutTaskId)).rejects.toThrow("taskId");
  });
});

describe("none and oracle", () => {
  it("none changes nothing", async () => {
    const trajectory = await createHarness("none").run(request());
    expect(trajectory).toMatchObject({ status: "completed", skillActivated: false, events: [] });
    expect(await greeting()).toBe("hullo, world\n");
  });

  it("oracle applies a reference diff", async () => {
    const solutions = join(root, "solutions");
    await mkdir(solutions);
    await writeFile(join(solutions, "t1.patch"), FIX);
    const trajectory = await createHarness("oracle", {
      solutionFor: solutionsFromDirectory(solutions),
    }).run(request());
    expect(trajectory.status).toBe("completed");
    expect(await greeting()).toBe("Hello, world\n");
  });

  it("oracle copies a reference folder over the workspace", async () => {
    const solutions = join(root, "solutions");
    await mkdir(join(solutions, "t1", "docs"), { recursive: true });
    await writeFile(join(solutions, "t1", "greeting.txt"), "Hello, world\n");
    await writeFile(join(solutions, "t1", "docs", "new.md"), "# new\n");
    const trajectory = await createHarness("oracle", {
      solutionFor: solutionsFromDirectory(solutions),
    }).run(request());
    expect(trajectory.status).toBe("completed");
    expect(await greeting()).toBe("Hello, world\n");
    expect(await readFile(join(workspace, "docs", "new.md"), "utf8")).toBe("# new\n");
  });
});

describe("createHarness", () => {
  it("creates every named harness and refuses unknown names", () => {
    for (const name of ["claude-code", "codex", "builtin", "none"] as const) {
      const harness = createHarness(name);
      expect(harness.name).toBe(name);
      expect(harness.specificationVersion).toBe("v1");
    }
    expect(() => createHarness("gemini")).toThrow(UsageError);
    expect(() => createHarness("gemini")).toThrow("expected one of: claude-code, codex");
    expect(() => createHarness("replay", undefined as never)).toThrow("recorded patches");
  });
});
