import { describe, expect, it } from "vitest";
import { processAlive as alive } from "../../test/support/processes.js";

describe("interrupting skillsmith", () => {
  it("kills the process groups it started when it gets SIGINT (Ctrl-C), leaving no orphans", async () => {
    // A Node process (standing in for the CLI, which calls killChildrenOnExit first) starts a
    // long child through runProcess and prints the child's pid; Ctrl-C goes to that process only.
    const script = [
      `const { runProcess } = await import(${JSON.stringify(new URL("../core/process.ts", import.meta.url).href)});`,
      `const { killChildrenOnExit } = await import(${JSON.stringify(new URL("./interrupt.ts", import.meta.url).href)});`,
      "killChildrenOnExit();",
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

/** Runs `lines` as a module in a fresh Node process (signals must not reach the test runner). */
async function runScript(
  lines: readonly string[],
): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
  const { spawn } = await import("node:child_process");
  const interrupt = JSON.stringify(new URL("./interrupt.ts", import.meta.url).href);
  const script = [
    `const { interruptGracefully, killChildrenOnExit } = await import(${interrupt});`,
    "killChildrenOnExit();",
    ...lines,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    stdout += chunk;
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("close", (_code, closed) => resolve(closed)),
  );
  return { stdout, signal };
}

describe("interruptGracefully", () => {
  it("hands the first Ctrl-C to the command, and the second ends the process", async () => {
    const result = await runScript([
      "interruptGracefully(() => {",
      '  console.log("stopping gracefully");',
      '  setTimeout(() => process.kill(process.pid, "SIGINT"), 50);',
      "});",
      'process.kill(process.pid, "SIGINT");',
      'setTimeout(() => console.log("still alive"), 5000);',
    ]);
    expect(result.stdout).toContain("stopping gracefully");
    expect(result.stdout).not.toContain("still alive");
    expect(result.signal).toBe("SIGINT");
  }, 60_000);

  it("ends the process at the first Ctrl-C once the command gave the signal back", async () => {
    const result = await runScript([
      'const release = interruptGracefully(() => console.log("stopping gracefully"));',
      "release();",
      'process.kill(process.pid, "SIGINT");',
      'setTimeout(() => console.log("still alive"), 5000);',
    ]);
    expect(result.stdout).not.toContain("stopping gracefully");
    expect(result.stdout).not.toContain("still alive");
    expect(result.signal).toBe("SIGINT");
  }, 60_000);
});
