import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  OWNER_FILE,
  ownerIsGone,
  parseOwner,
  processStartTicks,
  readOwner,
  writeOwner,
} from "./owner.js";

let holder: string;
beforeEach(async () => {
  holder = await mkdtemp(join(tmpdir(), "skillsmith-owner-"));
});
afterEach(async () => {
  await rm(holder, { recursive: true, force: true });
});

/** The pid of a process that has exited and been reaped (spawnSync waits for it). */
function deadPid(): number {
  const child = spawnSync("true");
  if (child.pid === undefined) throw new Error("could not start `true`");
  return child.pid;
}

describe("workspace owner records", () => {
  it("records this process, which is alive", async () => {
    await writeOwner(holder);
    const owner = await readOwner(holder);
    expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
    if (owner === undefined) throw new Error("no owner");
    expect(ownerIsGone(owner)).toBe(false);
  });

  it("reads nothing from a missing or malformed record", async () => {
    expect(await readOwner(holder)).toBeUndefined();
    for (const text of [
      "not json",
      "null",
      '{"pid":"12","host":"h"}',
      '{"pid":0,"host":"h"}',
      '{"pid":1.5,"host":"h"}',
      // Another program's file, or a later skillsmith's: not a record this one can judge.
      '{"format":"skillsmith-workspace-owner/2","pid":12,"host":"h","since":""}',
      '{"format":"other","pid":12,"host":"h","since":""}',
    ]) {
      await writeFile(join(holder, OWNER_FILE), text);
      expect(await readOwner(holder)).toBeUndefined();
    }
  });

  it("writes its format tag, and reads a record of an earlier version without one", async () => {
    await writeOwner(holder);
    expect(JSON.parse(await readFile(join(holder, OWNER_FILE), "utf8"))).toMatchObject({
      format: "skillsmith-workspace-owner/1",
    });
    await writeFile(join(holder, OWNER_FILE), '{"pid":12,"host":"h","since":"then"}\n');
    expect(await readOwner(holder)).toEqual({ pid: 12, host: "h", since: "then" });
  });

  it("names the field of a malformed record", () => {
    const parsed = parseOwner('{"pid":12,"host":7}');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.field).toBe("host");
  });

  it("calls an owner gone when its pid is free or reused, never one of another host", () => {
    const since = new Date().toISOString();
    expect(ownerIsGone({ pid: deadPid(), host: hostname(), since })).toBe(true);
    expect(ownerIsGone({ pid: deadPid(), host: `not-${hostname()}`, since })).toBe(false);
    const ticks = processStartTicks(process.pid);
    if (ticks !== undefined) {
      // Our pid with another start time: a later process reusing the dead owner's pid.
      const other = String(Number(ticks) + 1);
      expect(ownerIsGone({ pid: process.pid, host: hostname(), startTicks: other, since })).toBe(
        true,
      );
      expect(ownerIsGone({ pid: process.pid, host: hostname(), startTicks: ticks, since })).toBe(
        false,
      );
    }
  });
});
