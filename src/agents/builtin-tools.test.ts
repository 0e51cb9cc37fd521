import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolSet } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { UnsafeSandbox } from "../env/sandbox/unsafe.js";
import { createWorkspaceTools, resolveInWorkspace } from "./builtin-tools.js";

let root: string;
let workspace: string;
let tools: ToolSet;

async function runTool(name: string, input: Record<string, unknown>): Promise<unknown> {
  const chosen = tools[name];
  if (chosen?.execute === undefined) throw new Error(`no tool ${name}`);
  return chosen.execute(input, { toolCallId: "test", messages: [] });
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "skillsmith-tools-")));
  workspace = join(root, "ws");
  await mkdir(join(workspace, "src"), { recursive: true });
  await mkdir(join(workspace, ".agents/skills/pdf/scripts"), { recursive: true });
  await writeFile(join(workspace, "src/a.txt"), "one\ntwo\nthree\ntwo\n");
  await writeFile(join(workspace, ".agents/skills/pdf/SKILL.md"), "---\nname: pdf\n---\nbody");
  await writeFile(join(workspace, ".agents/skills/pdf/scripts/run.sh"), "echo hi\n");
  await writeFile(join(root, "outside.txt"), "secret\n");
  tools = await createWorkspaceTools({
    workspace,
    mountPath: workspace,
    sandbox: new UnsafeSandbox(),
    network: "none",
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    skills: [
      {
        name: "pdf",
        description: "PDFs",
        body: "Use scripts/run.sh.",
        relativePath: ".agents/skills/pdf",
      },
    ],
  });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("workspace confinement", () => {
  it("accepts relative paths and absolute paths inside the workspace", async () => {
    expect(await resolveInWorkspace(workspace, "src/a.txt")).toBe(join(workspace, "src/a.txt"));
    expect(await resolveInWorkspace(workspace, join(workspace, "new/file"))).toBe(
      join(workspace, "new/file"),
    );
  });

  it("maps the sandbox mount path onto the workspace", async () => {
    expect(
      await resolveInWorkspace(workspace, "/workspace/repo/src/a.txt", "/workspace/repo"),
    ).toBe(join(workspace, "src/a.txt"));
  });

  it("rejects .. escapes, absolute paths elsewhere and symlinks leading out", async () => {
    await expect(resolveInWorkspace(workspace, "../outside.txt")).rejects.toThrow(
      'path "../outside.txt" is outside the workspace',
    );
    await expect(resolveInWorkspace(workspace, "src/../../outside.txt")).rejects.toThrow("outside");
    await expect(resolveInWorkspace(workspace, join(root, "outside.txt"))).rejects.toThrow(
      "outside",
    );
    await symlink(root, join(workspace, "link"));
    await expect(resolveInWorkspace(workspace, "link/outside.txt")).rejects.toThrow(
      "leads outside the workspace",
    );
    await expect(resolveInWorkspace(workspace, "link/new-file")).rejects.toThrow("leads outside");
    await expect(runTool("read_file", { path: "../outside.txt" })).rejects.toThrow("outside");
    await expect(runTool("write_file", { path: "link/x", content: "x" })).rejects.toThrow(
      "outside",
    );
    expect(await readFile(join(root, "outside.txt"), "utf8")).toBe("secret\n");
  });
});

describe("file tools", () => {
  it("reads with offset and limit", async () => {
    expect(await runTool("read_file", { path: "src/a.txt", offset: 2, limit: 2 })).toBe(
      "two\nthree\n[... 2 more lines]",
    );
  });

  it("writes files, creating folders", async () => {
    expect(await runTool("write_file", { path: "new/b.txt", content: "héllo" })).toBe(
      "wrote 6 bytes to new/b.txt",
    );
    expect(await readFile(join(workspace, "new/b.txt"), "utf8")).toBe("héllo");
  });

  it("edits an exact, unique string and refuses ambiguous or missing ones", async () => {
    await expect(
      runTool("edit_file", { path: "src/a.txt", old_string: "two", new_string: "2" }),
    ).rejects.toThrow("occurs 2 times");
    await expect(
      runTool("edit_file", { path: "src/a.txt", old_string: "four", new_string: "4" }),
    ).rejects.toThrow("not found");
    await runTool("edit_file", { path: "src/a.txt", old_string: "three", new_string: "3" });
    await runTool("edit_file", {
      path: "src/a.txt",
      old_string: "two",
      new_string: "2",
      replace_all: true,
    });
    expect(await readFile(join(workspace, "src/a.txt"), "utf8")).toBe("one\n2\n3\n2\n");
  });

  it("lists files and folders, skipping .git", async () => {
    await mkdir(join(workspace, ".git"));
    expect(await runTool("list_files", { path: "src" })).toBe("src/a.txt");
    const listing = String(await runTool("list_files", { depth: 1 }));
    expect(listing.split("\n")).toEqual([".agents/", "src/"]);
  });

  it("searches contents with a regular expression", async () => {
    expect(await runTool("search", { pattern: "^t(wo|hree)$" })).toBe(
      "src/a.txt:2: two\nsrc/a.txt:3: three\nsrc/a.txt:4: two",
    );
    expect(await runTool("search", { pattern: "ONE", ignore_case: true, path: "src" })).toBe(
      "src/a.txt:1: one",
    );
    await expect(runTool("search", { pattern: "(" })).rejects.toThrow("invalid regular expression");
  });

  it("runs shell commands in the workspace through the sandbox", async () => {
    expect(await runTool("run_command", { command: "cat src/a.txt | wc -l; exit 3" })).toBe(
      "exit code: 3\nstdout:\n4\n",
    );
  });

  it("loads a skill's body and lists its other files", async () => {
    const loaded = String(await runTool("load_skill", { name: "pdf" }));
    expect(loaded).toContain("Skill folder: .agents/skills/pdf");
    expect(loaded).toContain("Use scripts/run.sh.");
    expect(loaded).toContain(".agents/skills/pdf/scripts/run.sh");
    await expect(runTool("load_skill", { name: "nope" })).rejects.toThrow("available: pdf");
  });
});

describe("tool errors are typed", () => {
  it("a path outside the workspace and a failed edit are InputErrors with their own codes", async () => {
    const outside = await resolveInWorkspace(workspace, "../outside.txt").catch((error) => error);
    expect(InputError.isInstance(outside)).toBe(true);
    expect((outside as InputError).code).toBe("agents.workspace-path-outside");
    const missing = await runTool("edit_file", {
      path: "src/a.txt",
      old_string: "four",
      new_string: "4",
    }).catch((error) => error);
    expect(InputError.isInstance(missing)).toBe(true);
    expect((missing as InputError).code).toBe("agents.tool-edit-not-found");
    // The message the model sees is unchanged: no file/line prefix from a location.
    expect((missing as Error).message).toBe("old_string not found in src/a.txt");
  });

  it("a link loop on the way is unreadable, not a path that does not exist yet", async () => {
    await symlink(join(workspace, "loop"), join(workspace, "loop"));
    // realpath fails with ELOOP here; before, the walk-up treated that as "not there yet".
    const looped = await resolveInWorkspace(workspace, "loop/new-file").catch((error) => error);
    expect(InputError.isInstance(looped)).toBe(true);
    expect((looped as InputError).code).toBe("core.file-unreadable");
    // A file where a folder is expected (ENOTDIR) still counts as "not there".
    expect(await resolveInWorkspace(workspace, "src/a.txt/new")).toBe(
      join(workspace, "src/a.txt/new"),
    );
  });
});
