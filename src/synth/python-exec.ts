/**
 * Running the solver's own Python in the sandbox, for the baselines that let a solver test its
 * work (the ReAct tool, Best-of-N self-checks). Only text the solver wrote is run, in a fresh
 * folder holding nothing else: hidden tests never come near it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxV1 } from "../env/index.js";

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

/**
 * Write `files` into a fresh folder and run `python3 <entry>` there: no network, a time limit,
 * the folder removed afterwards.
 */
export async function runPythonFiles(
  sandbox: SandboxV1,
  files: Readonly<Record<string, string>>,
  entry: string,
  options: {
    readonly timeoutMs?: number;
    readonly signal?: AbortSignal;
    /** Standard input for the script. */
    readonly input?: string;
  } = {},
): Promise<PythonRun> {
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-synth-python-"));
  try {
    for (const [name, content] of Object.entries(files))
      await writeFile(join(folder, name), content);
    const result = await sandbox.exec({
      command: ["python3", entry],
      workspace: folder,
      workspaceMountPath: "/workspace/scratch",
      // Without a mount namespace the folder is only reachable at its host path.
      cwd: sandbox.kind === "unsafe" ? folder : "/workspace/scratch",
      network: "none",
      env: { PYTHONDONTWRITEBYTECODE: "1" },
      limits: { timeoutMs: options.timeoutMs ?? 20_000 },
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
): Promise<{ passed: number; total: number }> {
  const marker = randomBytes(16).toString("hex");
  const run = await runPythonFiles(
    sandbox,
    { "solution.py": solution, "checks.txt": checks, "run_checks.py": checkRunner },
    "run_checks.py",
    { timeoutMs: 20_000, input: `${marker}\n`, ...(signal === undefined ? {} : { signal }) },
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
