import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runProcess } from "../src/core/process.js";
import { git } from "../test/support/git.js";
import { newFilePatch, writeAlphaSkill, writeRequirement } from "../test/support/suites.js";
import { type Benchmark, type BenchmarkRow, measure, summarise } from "./harness.js";
import { pytestSandboxChoice } from "./python.js";
import { generateRepository, repositoryFromEnvironment } from "./repositories.js";

const REQUIREMENTS = 10;
const COLD_SAMPLES = 3;
const TARGET_MS = 150;
const MOUNT = "/workspace/benchrepo";

interface Repository {
  readonly label: string;
  readonly path: string;
  readonly commit: string;
}

async function repository(root: string): Promise<Repository> {
  const given = await repositoryFromEnvironment();
  if (given !== undefined) return given;
  const generated = await generateRepository(join(root, "generated-3000"), { files: 3000 });
  return { label: "generated, 3000 files (set SKILLSMITH_BENCH_REPOSITORY)", ...generated };
}

/** Requirement k's pytest module: distinct per requirement and per sample. */
function testModule(k: number, sample: string): string {
  return `# sample ${sample}
import json
import os
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("SKILLSMITH_WORKSPACE", "${MOUNT}"))
TARGET = ROOT / "out" / "r${k}.txt"


def test_r${k}_exists():
    assert TARGET.is_file()


def test_r${k}_says_something():
    assert TARGET.read_text().strip() != ""


@pytest.mark.parametrize("line", [0, 1])
def test_r${k}_has_no_extra_lines(line):
    lines = TARGET.read_text().splitlines()
    assert len(lines) <= 1 or line >= 0


class TestR${k}:
    def test_repository_is_there(self):
        assert (ROOT / ".git").exists() or any(ROOT.iterdir())

    def test_json_round_trip(self):
        assert json.loads(json.dumps({"k": ${k}})) == {"k": ${k}}
`;
}

const CHECKS_PER_VERIFIER = 6;

async function writeSuite(
  root: string,
  repo: Repository,
  python: string,
  sample: string,
): Promise<{ suite: string; predictions: string }> {
  const suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: harness-time\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
    skillYaml: `repository:\n  ${repo.path.endsWith(".bundle") ? "bundle" : "path"}: ${repo.path}\n  commit: ${repo.commit}\n  name: benchrepo\n  setup: ["true"]\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Write result files. Use when a task asks for one.\n---\n\n# Alpha\n",
  });
  const lines: string[] = [];
  for (let k = 1; k <= REQUIREMENTS; k += 1) {
    await writeRequirement(skill, `r${k}`, {
      requirementMarkdown: `## Requirement\n\nWrite out/r${k}.txt.\n\n## File Operations\n\n- \`out/r${k}.txt\`\n\n## Acceptance Criteria\n\n- it exists\n`,
      checkScript: "true\n",
      verifierYaml: `command: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider test_r${k}.py --junitxml=junit.xml\nfiles: [test_r${k}.py]\njunit: junit.xml\ntimeoutSeconds: 120\n`,
    });
    await writeFile(
      join(skill, "requirements", `r${k}`, "verifier", `test_r${k}.py`),
      testModule(k, sample),
    );
    for (const arm of ["without", "with"]) {
      const patch = newFilePatch(`out/r${k}.txt`, arm);
      lines.push(JSON.stringify({ skill: "alpha", requirement: `r${k}`, arm, patch }));
    }
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

interface Sample {
  readonly perRun: number[];
  readonly perInvocation: number;
  readonly scored: boolean;
}

interface Invocation {
  readonly wallMs: number;
  readonly checkVerifierMs: number;
  readonly runs: readonly {
    readonly totalMs: number;
    readonly agentMs: number;
    readonly verifierMs: number;
    readonly passRatio: number;
    readonly total: number;
    readonly flags: readonly string[];
    readonly source: string | null;
    readonly patchFiles: number | null;
  }[];
}

/** One `bench run` (the check on, as by default) in a process of its own. */
async function timedRun(
  suite: { suite: string; predictions: string },
  runDir: string,
  sandbox: "local" | "unsafe",
  cacheDir: string,
): Promise<Sample> {
  const child = await runProcess(
    process.execPath,
    [
      "--import",
      "tsx",
      join(import.meta.dirname, "harness-time-invocation.ts"),
      JSON.stringify({ ...suite, runDir, cacheDir, sandbox }),
    ],
    { cwd: resolve(import.meta.dirname, "..") },
  );
  if (child.exitCode !== 0) throw new Error(`bench run failed: ${child.stderr.slice(-2000)}`);
  const invocation = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") as Invocation;
  const { runs } = invocation;
  const scored =
    runs.length === 2 * REQUIREMENTS &&
    runs.every(
      (run) =>
        run.passRatio === 1 &&
        run.total === CHECKS_PER_VERIFIER &&
        run.flags.every((flag) => flag === "weak-verifier") &&
        run.source === "channel" &&
        run.patchFiles === 1,
    );
  const agent = runs.reduce((sum, run) => sum + run.agentMs, 0);
  const verifier = runs.reduce((sum, run) => sum + run.verifierMs, 0);
  return {
    perRun: runs.map((run) => run.totalMs - run.agentMs - run.verifierMs),
    perInvocation:
      (invocation.wallMs - agent - verifier - invocation.checkVerifierMs) /
      Math.max(1, runs.length),
    scored,
  };
}

/** A plain copy of the working tree and one plain pytest of a verifier in it: a bare harness. */
async function bareBaseline(root: string, repo: Repository, python: string): Promise<number> {
  const checkout = join(root, "bare-checkout");
  await git(root, "clone", "-q", "--no-checkout", repo.path, checkout);
  await git(checkout, "checkout", "-q", repo.commit);
  const verifier = join(root, "bare-verifier");
  await mkdir(verifier, { recursive: true });
  await writeFile(join(verifier, "test_r1.py"), testModule(1, "bare"));
  let index = 0;
  const measured = await measure(
    async () => {
      const copy = join(root, `bare-copy-${index++}`);
      const copied = await runProcess("cp", ["-a", checkout, copy]);
      if (copied.exitCode !== 0) throw new Error(`cp -a failed: ${copied.stderr}`);
      await mkdir(join(copy, "out"), { recursive: true });
      await writeFile(join(copy, "out", "r1.txt"), "with\n");
      const tested = await runProcess(
        python,
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_r1.py"],
        {
          cwd: verifier,
          env: { ...process.env, SKILLSMITH_WORKSPACE: copy, PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
        },
      );
      if (tested.exitCode !== 0) throw new Error(`bare pytest failed: ${tested.stdout}`);
      await rm(copy, { recursive: true, force: true });
    },
    { iterations: 5, warmup: 1 },
  );
  return measured.medianMs;
}

const benchmark: Benchmark = {
  name: "harness-time",
  async run(): Promise<BenchmarkRow[]> {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-harness-time-"));
    const { kind: sandbox, python, note } = pytestSandboxChoice();
    try {
      const repo = await repository(root);
      const cacheDir = join(root, "cache");
      // Prepare the base once, outside the timings, with verifiers no timed sample uses.
      const warmup = await writeSuite(join(root, "warmup"), repo, python, "warm-up");
      await timedRun(warmup, join(root, "warmup", "run"), sandbox, cacheDir);
      const cold: Sample[] = [];
      let last: { suite: string; predictions: string } | undefined;
      for (let sample = 0; sample < COLD_SAMPLES; sample += 1) {
        const folder = join(root, `sample-${sample}`);
        last = await writeSuite(folder, repo, python, String(sample));
        cold.push(await timedRun(last, join(folder, "run"), sandbox, cacheDir));
      }
      const warm = await timedRun(
        last as { suite: string; predictions: string },
        join(root, "warm-run"),
        sandbox,
        cacheDir,
      );
      const baselineMs = await bareBaseline(root, repo, python);
      const scored = [...cold, warm].every((sample) => sample.scored);
      const check = scored
        ? "every run scored 6/6 from the channel, its change captured"
        : "SOME RUNS MISSCORED, FLAGGED OR NOT FROM THE CHANNEL";
      const coldPerRun = summarise(cold.flatMap((sample) => sample.perRun));
      const coldInvocation = summarise(cold.map((sample) => sample.perInvocation));
      const warmPerRun = summarise(warm.perRun);
      const common = `${note}; ${REQUIREMENTS} pytest verifiers, ${2 * REQUIREMENTS} runs; ${repo.label}; baseline: cp -a of the tree + one plain pytest; ${check}`;
      const rowOf = (name: string, medianMs: number, extra: string): BenchmarkRow => ({
        case: name,
        medianMs,
        baselineMs,
        ratio: baselineMs / medianMs,
        target: `< ${TARGET_MS} ms`,
        met: medianMs < TARGET_MS,
        note: `${extra}; ${common}`,
      });
      return [
        rowOf(
          "harness time per run, new verifiers (total − agent − verifier)",
          coldPerRun.medianMs,
          `median of ${coldPerRun.iterations} runs over ${COLD_SAMPLES} invocations, max ${coldPerRun.maxMs.toFixed(0)} ms`,
        ),
        rowOf(
          "harness time per run, new verifiers, whole invocation ÷ runs (inventories included)",
          coldInvocation.medianMs,
          `(wall − Σ agent − Σ verifier − check's verifier runs) ÷ runs, median of ${COLD_SAMPLES} invocations (${cold.map((sample) => sample.perInvocation.toFixed(0)).join(", ")} ms)`,
        ),
        rowOf(
          "harness time per run, same suite again in a new process",
          warmPerRun.medianMs,
          `median of ${warmPerRun.iterations} runs; whole invocation ÷ runs ${warm.perInvocation.toFixed(0)} ms`,
        ),
      ];
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
