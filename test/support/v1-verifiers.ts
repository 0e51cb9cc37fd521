/**
 * SWE-Skills-Bench v1's verifiers (`../shared/fixtures/swe-skills-bench-v1/tests/<batch>/`) laid
 * out as suite verifiers: the test file and its batch's `_*.py` helpers copied into a folder of
 * their own, run as v1 runs them at v1's mount path.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { SuiteVerifier } from "../../src/bench/suite/types.js";

export const v1Tests = resolve(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "shared",
  "fixtures",
  "swe-skills-bench-v1",
  "tests",
);
/** Whether the v1 data is beside the project (`skipIf(!hasV1Tests)` otherwise). */
export const hasV1Tests = existsSync(join(v1Tests, "batch1"));

/** v1's `<batch>/<file>` copied into `folder` with its helpers, as a suite verifier. */
export async function v1Verifier(
  folder: string,
  batch: string,
  file: string,
): Promise<Omit<SuiteVerifier, "cwd" | "timeoutSeconds">> {
  await mkdir(folder, { recursive: true });
  const files = [file];
  await cp(join(v1Tests, batch, file), join(folder, file));
  for (const helper of await readdir(join(v1Tests, batch))) {
    if (helper.startsWith("_") && helper.endsWith(".py")) {
      await cp(join(v1Tests, batch, helper), join(folder, helper));
      files.push(helper);
    }
  }
  return {
    command: `python3 -m pytest ${file} -v --tb=short --junitxml=junit.xml`,
    folder,
    files,
    mountPath: "/workspace/tests",
    junit: "junit.xml",
  };
}
