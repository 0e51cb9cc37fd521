/**
 * Running the solver's own Python in the sandbox, for the baselines that let a solver test its
 * work (the ReAct tool, Best-of-N self-checks). Only text the solver wrote is run, in a fresh
 * folder holding nothing else: hidden tests never come near it.
 */

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Mount, SandboxV1 } from "../env/index.js";

/** Output shown back to a model is cut to this many characters (head and tail kept). */
export const maxToolOutputCharacters = 4_000;

export interface PythonRun {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

function clip(text: string): string {
  if (text.length <= maxToolOutputCharacters) return text;
  const half = maxToolOutputCharacters / 2;
  return `${text.slice(0, half)}\n[... ${text.length - maxToolOutputCharacters} characters cut ...]\n${text.slice(-half)}`;
}

const sandboxOwnTopLevel: ReadonlySet<string> = new Set(["tmp", "run", "dev", "proc"]);

/**
 * Mounts that hide `paths` (e.g. a dataset holding hidden tests) inside the sandbox: an empty
 * folder over each folder, an empty file over each file — both made inside `scratch`, a fresh
 * folder of the caller's that it removes afterwards. Only existing paths, each resolved to its
 * real path: a mount point the read-only host lacks (or reaches through a symbolic link) cannot
 * be created, and the real one is what must be hidden. The root itself is never covered (that
 * would hide the system). Nothing to hide with for the unsafe sandbox (no mount namespace).
 */
export function hidingMounts(
  sandbox: SandboxV1,
  paths: readonly string[] | undefined,
  scratch: string,
): Mount[] {
  if (sandbox.kind === "unsafe") return [];
  const real = (paths ?? [])
    .filter((path) => existsSync(path))
    .map((path) => realpathSync(path))
    .filter((path) => path !== "/")
    // The sandboxes give these folders fresh (bubblewrap a tmpfs, containers their own): the
    // host's copy is not visible inside, and a mount point below them could not be made.
    .filter((path) => !sandboxOwnTopLevel.has(path.split("/")[1] ?? ""));
  if (real.length === 0) return [];
  const emptyFolder = join(scratch, "folder");
  const emptyFile = join(scratch, "file");
  mkdirSync(emptyFolder, { recursive: true });
  writeFileSync(emptyFile, "");
  return [...new Set(real)].map((path) => ({
    hostPath: statSync(path).isDirectory() ? emptyFolder : emptyFile,
    sandboxPath: path,
    readOnly: true,
  }));
}

/**
 * Write `files` into a fresh folder and run `<python> <entry>` there: no network, a time limit,
 * the folder removed afterwards. `python` defaults to `python3` on the sandbox's PATH; a family
 * that must not depend on the PATH (HumanEval) names its interpreter.
 */
export async function runPythonFiles(
  sandbox: SandboxV1,
  files: Readonly<Record<string, string>>,
  entry: string,
  options: {
    readonly timeoutMs?: number;
    readonly python?: string;
    /** Host folders the script must not read; an empty folder is mounted over each. */
    readonly hiddenPaths?: readonly string[];
    readonly signal?: AbortSignal;
    /** Standard input for the script. */
    readonly input?: string;
  } = {},
): Promise<PythonRun> {
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-synth-python-"));
  const empty = await mkdtemp(join(tmpdir(), "skillsmith-synth-hidden-"));
  try {
    const hidden = hidingMounts(sandbox, options.hiddenPaths, empty);
    for (const [name, content] of Object.entries(files))
      await writeFile(join(folder, name), content);
    const result = await sandbox.exec({
      command: [options.python ?? "python3", entry],
      workspace: folder,
      workspaceMountPath: "/workspace/scratch",
      // Without a mount namespace the folder is only reachable at its host path.
      cwd: sandbox.kind === "unsafe" ? folder : "/workspace/scratch",
      network: "none",
      env: { PYTHONDONTWRITEBYTECODE: "1" },
      limits: { timeoutMs: options.timeoutMs ?? 20_000 },
      ...(hidden.length === 0 ? {} : { extraMounts: hidden }),
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      stdout: clip(result.stdout),
      stderr: clip(result.stderr),
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
  }
}

/**
 * Runs each `assert` line of `checks.txt` against `solution.py` on its own and prints
 * `<marker> {"passed": p, "total": t}`. The marker is a per-run random string read from stdin
 * before the solution runs, so a solution cannot simply print a result line of its own (it can
 * still dig the marker out of the interpreter's frames: these are the solver's own self-checks,
 * used to choose among its samples, never a hidden test's score).
 */
const checkRunner = `import json
import sys


def run(marker):
    with open("checks.txt", encoding="utf-8") as handle:
        lines = [line.strip() for line in handle.read().splitlines()]
    lines = [line for line in lines if line.startswith("assert")]
    passed = 0
    namespace = {"__name__": "solution"}
    try:
        with open("solution.py", encoding="utf-8") as handle:
            exec(compile(handle.read(), "solution.py", "exec"), namespace)
        loaded = True
    except BaseException:
        loaded = False
    if loaded:
        for line in lines:
            try:
                exec(line, dict(namespace))
                passed += 1
            except BaseException:
                pass
    sys.stdout.write(marker + " " + json.dumps({"passed": passed, "total": len(lines)}) + "\\n")


run(sys.stdin.readline().strip())
`;

/**
 * The share of `assert` lines a candidate module passes (0 when it cannot run, times out, or
 * prints anything but exactly one result line with this run's marker).
 */
export async function passRateOfChecks(
  sandbox: SandboxV1,
  solution: string,
  checks: string,
  signal?: AbortSignal,
  interpreter: { readonly python?: string; readonly hiddenPaths?: readonly string[] } = {},
): Promise<{ passed: number; total: number }> {
  const marker = randomBytes(16).toString("hex");
  const run = await runPythonFiles(
    sandbox,
    { "solution.py": solution, "checks.txt": checks, "run_checks.py": checkRunner },
    "run_checks.py",
    {
      timeoutMs: 20_000,
      ...interpreter,
      input: `${marker}\n`,
      ...(signal === undefined ? {} : { signal }),
    },
  );
  const total = checks.split("\n").filter((l) => l.trim().startsWith("assert")).length;
  const lines = run.stdout.split("\n").filter((line) => line.startsWith(`${marker} `));
  if (lines.length !== 1) return { passed: 0, total };
  try {
    const parsed = JSON.parse((lines[0] ?? "").slice(marker.length + 1)) as {
      passed?: unknown;
      total?: unknown;
    };
    if (typeof parsed.passed === "number" && typeof parsed.total === "number")
      return { passed: Math.min(parsed.passed, total), total };
  } catch {
    // A module that kills the interpreter (or a timeout) prints nothing usable: no pass.
  }
  return { passed: 0, total };
}

/** `passRateOfChecks` as one number: passed over total, 0 when there is no check. */
export async function passShareOfChecks(
  ...args: Parameters<typeof passRateOfChecks>
): Promise<number> {
  const { passed, total } = await passRateOfChecks(...args);
  return total === 0 ? 0 : passed / total;
}
