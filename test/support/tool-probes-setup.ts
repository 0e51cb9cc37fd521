/**
 * Vitest's global setup for test/support/tool-probes.ts: probes once per run and gives the
 * answers to every test file (a global setup cannot call `inject`, so the reading side is a
 * module of its own).
 */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    hasPytest: boolean;
  }
}

/** Whether `python3 -m pytest` runs here (the verifiers of the examples need it). */
export function probePytest(): boolean {
  try {
    execFileSync("python3", ["-m", "pytest", "--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export default function setup(project: TestProject): void {
  project.provide("hasPytest", probePytest());
}
