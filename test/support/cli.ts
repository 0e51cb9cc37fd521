import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { runCli } from "../../src/cli/program.js";

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run the real CLI in-process (the same `runCli` the binary calls), capturing both streams. */
export async function runInProcess(
  argv: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  return { code, stdout, stderr };
}

/** Write a tree of text files under `root` (`{"a/b.txt": "..."}`), creating folders. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

const repositoryRoot = resolve(import.meta.dirname, "..", "..");
const builtCli = join(repositoryRoot, "dist", "cli", "main.js");

/**
 * The arguments after `node` that start the CLI: the built one when `dist/` exists (`npm test`
 * builds it first), as a user starts it; otherwise the sources through tsx. Through tsx, every
 * start compiles the CLI's sources again: `--help` took 3.6 s of CPU against 1.0 s built.
 */
export function cliNodeArguments(): string[] {
  return existsSync(builtCli)
    ? [builtCli]
    : ["--import", "tsx", join(repositoryRoot, "src", "cli", "main.ts")];
}

/**
 * For a test's own Node script that imports skillsmith's modules and runs in a child process
 * (two processes racing for a lock, a process killed while it holds a workspace): with `dist/`
 * built, the script imports the built modules and plain node runs it; otherwise it imports the
 * sources and runs through tsx, which compiled them again in every child (1.0 s of CPU against
 * 0.4 s for the workspace modules).
 */
export const childScript = {
  /** The file name ending for the script: plain node runs `.mjs`, tsx `.mts`. */
  extension: existsSync(builtCli) ? ".mjs" : ".mts",
  /** The absolute path to import for the source module `src/<sourcePath>` (ending in `.ts`). */
  module(sourcePath: string): string {
    return existsSync(builtCli)
      ? join(repositoryRoot, "dist", sourcePath.replace(/\.ts$/, ".js"))
      : join(repositoryRoot, "src", sourcePath);
  },
  /** The arguments after `node` that run `script`. */
  nodeArguments(script: string): string[] {
    return existsSync(builtCli) ? [script] : ["--import", "tsx", script];
  },
};
