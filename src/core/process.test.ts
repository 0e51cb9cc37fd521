import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runProcess } from "./process.js";

/** A process counts as alive when it exists and is not a zombie awaiting its reaper. */
function alive(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(status);
  } catch {
    return false;
  }
}

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

describe("interrupting skillsmith", () => {
  it("kills the process groups it started when it gets SIGINT (Ctrl-C), leaving no orphans", async () => {
    // A Node process (standing in for the CLI) starts a long child through runProcess and
    // prints the child's pid; Ctrl-C is then sent to that Node process only.
    const script = [
      `const { runProcess } = await import(${JSON.stringify(new URL("./process.ts", import.meta.url).href)});`,
      `void runProcess("sh", ["-c", "echo $$; exec sleep 60"], { onStdout: (chunk) => process.stdout.write(chunk) });`,
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const { spawn } = await import("node:child_process");
    const parent = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const childPid = await new Promise<number>((resolve, reject) => {
      parent.stdout.setEncoding("utf8");
      parent.stdout.once("data", (chunk: string) => resolve(Number.parseInt(chunk.trim(), 10)));
      parent.once("exit", () => reject(new Error("parent exited before starting its child")));
    });
    expect(alive(childPid)).toBe(true);
    const exited = new Promise((resolve) => parent.once("exit", resolve));
    parent.kill("SIGINT");
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(childPid)).toBe(false);
  });
});
