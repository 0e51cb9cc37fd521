import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError } from "../../core/errors.js";
import { acquireLock } from "./lock.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-lock-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("acquireLock", () => {
  it("admits one holder at a time and records who holds it", async () => {
    const path = join(scratch, "one.lock");
    const first = await acquireLock(path);
    expect(first.acquired).toBe(true);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({
      pid: process.pid,
      host: hostname(),
    });
    let secondAcquired = false;
    const second = acquireLock(path, { pollMs: 10 }).then((outcome) => {
      secondAcquired = outcome.acquired;
      return outcome;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(secondAcquired).toBe(false);
    if (first.acquired) await first.release();
    const outcome = await second;
    expect(outcome.acquired).toBe(true);
    if (outcome.acquired) await outcome.release();
  });

  it("stops waiting when the work it waits for is done", async () => {
    const path = join(scratch, "done.lock");
    const holder = await acquireLock(path);
    let finished = false;
    const waiter = acquireLock(path, { pollMs: 10, done: async () => finished });
    setTimeout(() => {
      finished = true;
    }, 50);
    expect((await waiter).acquired).toBe(false);
    if (holder.acquired) await holder.release();
  });

  it("times out on a live holder and takes over from a dead one", async () => {
    const path = join(scratch, "live.lock");
    await writeFile(path, JSON.stringify({ pid: process.pid, host: hostname(), since: "" }));
    await expect(acquireLock(path, { timeoutMs: 50, pollMs: 10 })).rejects.toBeInstanceOf(
      InfrastructureError,
    );
    // A pid above the kernel's maximum (4194304) cannot belong to a live process.
    await writeFile(path, JSON.stringify({ pid: 4_194_305, host: hostname(), since: "" }));
    const outcome = await acquireLock(path, { timeoutMs: 1_000, pollMs: 10 });
    expect(outcome.acquired).toBe(true);
    if (outcome.acquired) await outcome.release();
  });
});
