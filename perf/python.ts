/**
 * Which sandbox a benchmark's pytest verifiers can run in here. Bubblewrap shows the system's
 * `/usr` but hides home folders, so a pytest installed under one (pyenv, a user's pip) is not
 * there inside it: then the benchmark runs `unsafe` with this machine's interpreter, and says so.
 */
import { execFileSync } from "node:child_process";

export interface PytestSandboxChoice {
  readonly kind: "local" | "unsafe";
  /** The interpreter to name in verifier commands (never a version manager's shim). */
  readonly python: string;
  /** For the rows' notes. */
  readonly note: string;
}

function hasPytest(python: string): boolean {
  try {
    execFileSync(python, ["-m", "pytest", "--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export function pytestSandboxChoice(): PytestSandboxChoice {
  if (hasPytest("/usr/bin/python3")) {
    return { kind: "local", python: "/usr/bin/python3", note: "bubblewrap" };
  }
  // The interpreter itself: a shim is a shell script costing tens of milliseconds per call.
  const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
    encoding: "utf8",
  }).trim();
  if (!hasPytest(python)) throw new Error("no python3 with pytest on this machine");
  return { kind: "unsafe", python, note: "unsafe (no pytest visible inside bubblewrap)" };
}
