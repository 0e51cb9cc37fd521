import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError } from "./errors.js";
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

describe("acquireLock, two processes taking over one stale lock", () => {
  it("lets exactly one of them win each round", async () => {
    const rounds = 24;
    const directory = join(scratch, "race");
    await mkdir(directory);
    // Stale locks of a dead owner on this host (a pid above the kernel's maximum, 4194304).
    for (let round = 0; round < rounds; round += 1)
      await writeFile(
        join(directory, `round-${round}.lock`),
        JSON.stringify({ pid: 4_194_305, host: hostname(), since: "" }),
      );
    // Both children start each round at the same wall-clock moment, after both have loaded: each
    // marks itself ready, waits for the other, and starts 1 s after the later mark. Checked by
    // hand: the former remove-then-create takeover gave two winners in most rounds.
    // Neither exits before both are done: a child that finished first and exited would leave
    // locks of a dead owner, which the slower child rightly takes over (seen at load 25).
    const script = `
      import { readdir, stat, writeFile } from "node:fs/promises";
      import { acquireLock } from ${JSON.stringify(new URL("./lock.ts", import.meta.url).href)};
      const directory = ${JSON.stringify(directory)};
      async function barrier(prefix) {
        await writeFile(directory + "/" + prefix + process.pid, "");
        for (;;) {
          const marks = (await readdir(directory)).filter((name) => name.startsWith(prefix));
          if (marks.length === 2) return marks;
          await new Promise((done) => setTimeout(done, 5));
        }
      }
      const marks = await barrier("ready-");
      const times = await Promise.all(marks.map(async (name) => (await stat(directory + "/" + name)).mtimeMs));
      const startAt = Math.max(...times) + 1_000;
      const won = [];
      for (let round = 0; round < ${rounds}; round += 1) {
        const at = startAt + round * 40;
        while (Date.now() < at) {}
        try {
          const outcome = await acquireLock(directory + "/round-" + round + ".lock", { timeoutMs: 0, pollMs: 1 });
          if (outcome.acquired) won.push(round);
        } catch (error) {
          if (error.code !== "core.lock-timeout") throw error;
        }
      }
      await barrier("done-");
      process.stdout.write(JSON.stringify(won));
    `;
    const child = () =>
      new Promise<number[]>((resolve, reject) => {
        execFile(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", script],
          { timeout: 90_000 },
          (error, stdout) =>
            error === null ? resolve(JSON.parse(stdout) as number[]) : reject(error),
        );
      });
    const [first, second] = await Promise.all([child(), child()]);
    const winners = Array.from(
      { length: rounds },
      (_, round) => Number(first.includes(round)) + Number(second.includes(round)),
    );
    expect(winners).toEqual(Array.from({ length: rounds }, () => 1));
  }, 120_000);
});

describe("acquireLock, owners it cannot judge", () => {
  it("waits for a lock from another host even when its pid is free here", async () => {
    const path = join(scratch, "other-host.lock");
    await writeFile(path, JSON.stringify({ pid: 4_194_305, host: `not-${hostname()}`, since: "" }));
    await expect(acquireLock(path, { timeoutMs: 30, pollMs: 10 })).rejects.toMatchObject({
      code: "core.lock-timeout",
      data: { path, pid: 4_194_305 },
    });
    // The lock is left as it was: nobody on this host may remove it.
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ host: `not-${hostname()}` });
  });

  it("takes over a legacy wiki lock (pid only, written on this host) whose process died", async () => {
    const path = join(scratch, "legacy.lock");
    await writeFile(path, JSON.stringify({ pid: 4_194_305, started: "" }));
    const outcome = await acquireLock(path, { timeoutMs: 0, pollMs: 1 });
    expect(outcome.acquired).toBe(true);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ pid: process.pid });
    if (outcome.acquired) await outcome.release();
  });
});
