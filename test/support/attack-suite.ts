/**
 * A suite of attack rows for the verifier-integrity tables: one skill whose requirements are the
 * rows (each with the same verifier), and replay predictions where the without arm is the stub
 * and the with arm the stub plus the row's files.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { reportRunDir } from "../../src/bench/analysis/load.js";
import type { BenchReport } from "../../src/bench/analysis/report.js";
import { runSuite } from "../../src/bench/run/runner.js";
import { ResultsStore, type RunResult } from "../../src/bench/store/results.js";
import type { SandboxV1 } from "../../src/env/sandbox/types.js";
import { newFilesPatch, TINY_MOUNT } from "./suites.js";

export interface AttackSuiteRow {
  readonly id: string;
  readonly files: Readonly<Record<string, string>>;
}

export interface AttackVerifier {
  readonly yaml: string;
  /** The verifier's files by name (written under `verifier/`). */
  readonly files: Readonly<Record<string, string>>;
}

export async function writeAttackSkill(
  suite: string,
  id: string,
  repository: { repo: string; commit: string },
  rows: readonly AttackSuiteRow[],
  verifier: AttackVerifier,
): Promise<void> {
  const skill = join(suite, "skills", id);
  await mkdir(join(skill, "agent-skills", id), { recursive: true });
  await writeFile(
    join(skill, "skill.yaml"),
    `repository:\n  path: ${repository.repo}\n  commit: ${repository.commit}\n  name: tiny\n  mountPath: ${TINY_MOUNT}\n`,
  );
  await writeFile(
    join(skill, "agent-skills", id, "SKILL.md"),
    `---\nname: ${id}\ndescription: Write the tinycalc package. Use when a task asks for tinycalc.\n---\n\n# ${id}\n\nWrite tinycalc.\n`,
  );
  for (const row of rows) {
    const folder = join(skill, "requirements", row.id);
    await mkdir(join(folder, "verifier"), { recursive: true });
    await writeFile(
      join(folder, "requirement.md"),
      "## Background\n\nA tiny repository.\n\n## Requirement\n\nCreate the package tinycalc with add, sub and __version__.\n\n## File Operations\n\n- `tinycalc/__init__.py`\n- `tinycalc/calc.py`\n\n## Acceptance Criteria\n\n- add and sub compute sums and differences\n- tinycalc.__version__ is a string\n",
    );
    await writeFile(join(folder, "verifier.yaml"), verifier.yaml);
    for (const [name, content] of Object.entries(verifier.files)) {
      await writeFile(join(folder, "verifier", name), content);
    }
  }
}

export function attackPredictionLines(
  skill: string,
  rows: readonly AttackSuiteRow[],
  stub: Readonly<Record<string, string>>,
): string[] {
  return rows.flatMap((row) => [
    JSON.stringify({ skill, requirement: row.id, arm: "without", patch: newFilesPatch(stub) }),
    JSON.stringify({
      skill,
      requirement: row.id,
      arm: "with",
      patch: newFilesPatch({ ...stub, ...row.files }),
    }),
  ]);
}

/** `runSuite`'s options for an attack table under `root` (its run folder and cache inside). */
function attackRunOptions(
  root: string,
  suite: string,
  predictions: string,
  sandbox: SandboxV1 | "local",
  concurrency: number,
) {
  return {
    suite,
    runDir: join(root, "run"),
    predictions,
    sandbox,
    cacheDir: join(root, "cache"),
    concurrency,
  };
}

/** Run the suite with the replay agent and read back every run and the report. */
export async function runAttackSuite(
  root: string,
  suite: string,
  predictions: string,
  sandbox: SandboxV1 | "local",
  concurrency = 2,
): Promise<{ results: RunResult[]; report: BenchReport }> {
  const options = attackRunOptions(root, suite, predictions, sandbox, concurrency);
  const { runDir } = options;
  await runSuite(options);
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return { results: store.results(), report: await reportRunDir(runDir) };
  } finally {
    store.close();
  }
}

/**
 * `runAttackSuite` with the stub measured once: every without arm of the table is the same stub
 * (one patch, one verifier, one repository), so running it once per row only repeated the same
 * measurement. `stubSkill`'s requirement `stubRequirement` runs first (both arms: its without
 * arm is the stub); that without arm's stored result is then recorded as the without arm of each
 * row of `shared.rows`, and the second invocation runs what is still missing: every with arm. The report is built by `reportRunDir` from the store as for any run, so each row's
 * verdict is computed against the stub's real measurement.
 */
export async function runAttackSuiteSharingStub(
  root: string,
  suite: string,
  predictions: string,
  sandbox: SandboxV1 | "local",
  shared: {
    readonly stubSkill: string;
    readonly stubRequirement: string;
    readonly rows: readonly { readonly skill: string; readonly requirement: string }[];
  },
  concurrency = 2,
): Promise<{ results: RunResult[]; report: BenchReport }> {
  const options = attackRunOptions(root, suite, predictions, sandbox, concurrency);
  const { runDir } = options;
  const started = performance.now();
  await runSuite({
    ...options,
    selection: {
      skills: [shared.stubSkill],
      requirements: [`${shared.stubSkill}/${shared.stubRequirement}`],
    },
  });
  const stubMs = performance.now() - started;
  const store = ResultsStore.open(runDir);
  try {
    const stub = store
      .results()
      .find(
        (result) =>
          result.skill === shared.stubSkill &&
          result.requirement === shared.stubRequirement &&
          result.arm === "without",
      );
    if (stub === undefined) throw new Error("the stub's shared without arm was not stored");
    for (const row of shared.rows) {
      const key = { ...stub, skill: row.skill, requirement: row.requirement };
      if (!store.has(key)) store.recordResult(key);
    }
  } finally {
    store.close();
  }
  const outcome = await runAttackSuite(root, suite, predictions, sandbox, concurrency);
  if (process.env.SKILLSMITH_ATTACK_TABLE === "1") {
    const durations = outcome.results
      .map((result) => result.verifier?.durationMs ?? 0)
      .sort((left, right) => left - right);
    process.stderr.write(
      `${typeof sandbox === "string" ? sandbox : sandbox.kind}: stub skill ${(stubMs / 1000).toFixed(1)} s, the rest ${((performance.now() - started - stubMs) / 1000).toFixed(1)} s; verifier median ${durations[Math.floor(durations.length / 2)]} ms\n`,
    );
  }
  return outcome;
}

/** Every without arm (the stub alone) scored `passed` of `total`, unflagged. */
export function stubScores(
  results: readonly RunResult[],
  rows: readonly AttackSuiteRow[],
): { row: string; passed: number; total: number; flags: readonly string[] }[] {
  return rows.map((row) => {
    const result = results.find((found) => found.requirement === row.id && found.arm === "without");
    return {
      row: row.id,
      passed: result?.passed ?? -1,
      total: result?.total ?? -1,
      flags: result?.flags ?? ["no result"],
    };
  });
}
