import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runInProcess } from "./support/cli.js";

const repositoryRoot = resolve(import.meta.dirname, "..");
const binary = resolve(repositoryRoot, "dist", "cli", "main.js");

const run = runInProcess;

describe("CLI program (in-process)", () => {
  it("prints help with every command group and exits 0", async () => {
    const result = await run(["--help"]);
    expect(result.code).toBe(0);
    for (const group of ["quickstart", "skill", "stats", "model", "bench"]) {
      expect(result.stdout).toContain(group);
    }
  });

  it("exits 2 on an unknown command, with a message on stderr only", async () => {
    const result = await run(["no-such-command"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/unknown command/);
  });

  it("exits 2 on an unknown option", async () => {
    const result = await run(["quickstart", "--no-such-flag"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option/);
  });

  it("prints the package version", async () => {
    const result = await run(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe.skipIf(!existsSync(binary))("CLI binary (dist/, built by `npm test`'s pretest)", () => {
  it("runs as a process and returns the exit code of a usage error", async () => {
    const execution = promisify(execFile)(process.execPath, [binary, "no-such-command"]);
    await expect(execution).rejects.toMatchObject({ code: 2 });
  });

  it("answers --help with exit 0", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [binary, "--help"]);
    expect(stdout).toContain("Usage: skillsmith");
  });
});
