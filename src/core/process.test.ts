import { describe, expect, it } from "vitest";
import { processAlive as alive } from "../../test/support/processes.js";
import { runProcess } from "./process.js";

describe("runProcess", () => {
  it("captures output and exit code", async () => {
    const result = await runProcess("sh", ["-c", "echo out; echo err >&2; exit 3"]);
    expect(result).toMatchObject({
      exitCode: 3,
      stdout: "out\n",
      stderr: "err\n",
      timedOut: false,
    });
  });

  it("feeds stdin and closes it", async () => {
    const result = await runProcess("cat", [], { input: "hello" });
    expect(result.stdout).toBe("hello");
  });

  it("reports a missing program without throwing", async () => {
    const result = await runProcess("definitely-not-a-program-xyz", []);
    expect(result.spawnError?.code).toBe("ENOENT");
  });

  it("kills the whole process tree on timeout, leaving no orphans", async () => {
    // The child starts a grandchild that ignores SIGTERM and prints its pid.
    const script = "sh -c 'trap \"\" TERM; echo $$; sleep 60' & wait";
    const result = await runProcess("sh", ["-c", script], { timeoutMs: 300, killGraceMs: 200 });
    expect(result.timedOut).toBe(true);
    const grandchild = Number.parseInt(result.stdout.trim(), 10);
    expect(grandchild).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(grandchild)).toBe(false);
  });
});

describe("process-wide state", () => {
  it("installs no signal or exit handlers: the CLI does that (cli/interrupt.ts)", async () => {
    const events = ["SIGINT", "SIGTERM", "SIGHUP", "exit"] as const;
    const before = events.map((event) => process.listenerCount(event));
    await runProcess("sh", ["-c", "exit 0"]);
    expect(events.map((event) => process.listenerCount(event))).toEqual(before);
  });
});
