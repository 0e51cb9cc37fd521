import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { isSkillsmithError } from "../../core/errors.js";
import { SandboxCgroup } from "./cgroup.js";

// A plain folder stands in for a v1 controller tree: `create` only makes a sub-folder there when
// no limit is asked for, and the counters are ordinary files we write by hand.
const cleanups = cleanupsAfterEach();
let tree: string;
beforeEach(async () => {
  tree = await temporaryDirectoryIn(cleanups, "skillsmith-cgroup-");
});

/** A group in two fake controller trees; the counter files live in the memory and pids folders. */
async function fakeGroup(): Promise<{ group: SandboxCgroup; memory: string; pids: string }> {
  await mkdir(join(tree, "memory"));
  await mkdir(join(tree, "pids"));
  const group = await SandboxCgroup.create(
    { version: 1, memory: join(tree, "memory"), pids: join(tree, "pids") },
    {},
  );
  const [memory, pids] = group.folders;
  if (memory === undefined || pids === undefined) throw new Error("no group folders were made");
  return { group, memory, pids };
}

describe("SandboxCgroup counters", () => {
  it("reads the OOM and process-limit counters, and zero where the files are absent", async () => {
    const { group, memory, pids } = await fakeGroup();
    expect(await group.oomKills()).toBe(0);
    expect(await group.processLimitHits()).toBe(0);
    await writeFile(
      join(memory, "memory.oom_control"),
      "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
    );
    await writeFile(join(pids, "pids.events"), "max 7\n");
    expect(await group.oomKills()).toBe(3);
    expect(await group.processLimitHits()).toBe(7);
  });

  it("fails naming the counter file when it is there but unreadable, instead of counting zero", async () => {
    const { group, memory, pids } = await fakeGroup();
    // As root EACCES cannot be provoked; a folder in the file's place gives EISDIR.
    await mkdir(join(memory, "memory.oom_control"));
    await mkdir(join(pids, "pids.events"));
    for (const [read, folder] of [
      [() => group.oomKills(), memory],
      [() => group.processLimitHits(), pids],
    ] as const) {
      const failure = await read().catch((error: unknown) => error);
      expect(isSkillsmithError(failure, "infrastructure")).toBe(true);
      expect((failure as Error).message).toContain(folder);
    }
  });
});
