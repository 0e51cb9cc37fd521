/**
 * The SWE-Skills-Bench sample (`../shared/fixtures/swe-skills-bench`) imported with
 * `skillsmith bench import swe-skills-bench` and run with the REAL Claude Code CLI in bubblewrap,
 * driven by the scripted model server (only the model's words are scripted).
 *
 * Kept to one skill × two requirements so it runs in seconds: the layout is a copy of the
 * sample's config (all of it, quirks included), the python-resilience skill and its batch1 and
 * batch2 tasks. Two adjustments, both because the sample cannot run offline as shipped:
 * - it pins a GitHub commit of httpx, so a local stand-in repository named `httpx` takes its
 *   place (through `--repo-root`) and the config's commit is rewritten to the stand-in's;
 * - it ships no tests, so small pytest verifiers are added in the layout's own place
 *   (`tests/batchN/test_python_resilience.py`), using its fixed paths (`/workspace/httpx`).
 *
 * The scripted model: in batch1's assisted arm it calls the Skill tool first, then writes a
 * complete `resilient.py`; in batch1's unassisted arm it writes one without the circuit states;
 * in batch2 it writes the complete one in both arms. By hand: batch1 without 2 of 3 checks, with
 * 3 of 3 (d = 33.3); batch2 2 of 2 in both (d = 0); Δ = 16.7; with two deltas every one of the 4
 * sign assignments has |mean| ≥ 16.7, so p = 1 → Ineffective; activation 1 of 2 assisted runs.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import type { Trajectory } from "../src/agents/types.js";
import { reportRunDir } from "../src/bench/analysis/load.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore, type RunResult } from "../src/bench/store/results.js";
import { type BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { type CliRun, runInProcess } from "./support/cli.js";
import { git } from "./support/git.js";

const SAMPLE = join(import.meta.dirname, "..", "..", "shared", "fixtures", "swe-skills-bench");
const SKILL = "python-resilience";
/** The commit the sample pins for python-resilience (https://github.com/encode/httpx). */
const PINNED = "b5addb64f0161ff6bfe94c124ef76f6a1fba5254";
const MODULE = "/workspace/httpx/httpx/_transports/resilient.py";
const API_KEY = "sk-test-import-claude-4d2e6f8a0b1c3d5e7f90";

const claude = await findAgentCli("claude");
const bubblewrap = await usableBubblewrap();
// The layout's verifier command is `python -m pytest`; Debian ships `python` only with python-is-python3.
const hasPython = findOnPath("python") !== null;
const hasSample = await readFile(join(SAMPLE, "config", "benchmark_config.yaml"), "utf8").then(
  (text) => text.includes(PINNED),
  () => false,
);

const COMPLETE = `import enum


class CircuitState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitOpenError(Exception):
    pass


class ResilientTransport:
    def __init__(self, transport, max_retries=3):
        self.transport = transport
        self.max_retries = max_retries
        self.state = CircuitState.CLOSED
`;
const WITHOUT_CIRCUIT = `class ResilientTransport:
    def __init__(self, transport, max_retries=3):
        self.transport = transport
        self.max_retries = max_retries
`;

const LOAD = `import importlib.util
import py_compile

PATH = "${MODULE}"


def load():
    spec = importlib.util.spec_from_file_location("resilient", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compiles():
    """The module compiles without syntax errors."""
    py_compile.compile(PATH, doraise=True)
`;

import { usableBubblewrap } from "./support/sandboxes.js";

const BATCH1_TEST = `${LOAD}

def test_transport_class():
    """ResilientTransport is a class."""
    assert isinstance(load().ResilientTransport, type)


def test_circuit_states():
    """The circuit breaker has exactly the states CLOSED, OPEN and HALF_OPEN."""
    assert {state.name for state in load().CircuitState} == {"CLOSED", "OPEN", "HALF_OPEN"}
`;
const BATCH2_TEST = `${LOAD}

def test_three_retries_by_default():
    """At most three retries unless configured otherwise."""
    assert load().ResilientTransport(object()).max_retries == 3
`;

let root: string;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-import-claude-"));
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

function cli(argv: string[]): Promise<CliRun> {
  return runInProcess(argv, {
    env: { ...process.env, SKILLSMITH_CACHE_DIR: join(root, "cache") },
    cwd: root,
  });
}

/** A trimmed copy of the sample, pinned to a local stand-in of httpx, with verifiers added. */
async function makeLayout(): Promise<{ layout: string; repoRoot: string }> {
  const repoRoot = join(root, "repos");
  const repo = join(repoRoot, "httpx");
  await mkdir(join(repo, "httpx", "_transports"), { recursive: true });
  await writeFile(join(repo, "httpx", "__init__.py"), "");
  await writeFile(join(repo, "httpx", "_transports", "__init__.py"), "");
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "stand-in for httpx");
  const commit = await git(repo, "rev-parse", "HEAD");

  const layout = join(root, "layout");
  const config = await readFile(join(SAMPLE, "config", "benchmark_config.yaml"), "utf8");
  await mkdir(join(layout, "config"), { recursive: true });
  await writeFile(
    join(layout, "config", "benchmark_config.yaml"),
    config.replace(`commit: "${PINNED}"`, `commit: "${commit}"`),
  );
  await cp(join(SAMPLE, "skills", SKILL), join(layout, "skills", SKILL), { recursive: true });
  for (const [batch, test] of [
    ["batch1", BATCH1_TEST],
    ["batch2", BATCH2_TEST],
  ] as const) {
    await mkdir(join(layout, "tasks", batch), { recursive: true });
    await cp(
      join(SAMPLE, "tasks", batch, `${SKILL}.md`),
      join(layout, "tasks", batch, `${SKILL}.md`),
    );
    await mkdir(join(layout, "tests", batch), { recursive: true });
    await writeFile(join(layout, "tests", batch, "test_python_resilience.py"), test);
  }
  return { layout, repoRoot };
}

function write(content: string) {
  return { toolCalls: [{ name: "Write", input: { file_path: MODULE, content } }] };
}

describe("imported SWE-Skills-Bench sample, real Claude Code CLI (scripted model)", () => {
  it.skipIf(claude === undefined || bubblewrap === undefined || !hasPython || !hasSample)(
    "imports the sample, runs both arms in bubblewrap and stores verifier-scored results (needs the claude CLI (npm run agent-clis), bubblewrap, `python` with pytest and ../shared/fixtures/swe-skills-bench)",
    async () => {
      const { layout, repoRoot } = await makeLayout();
      const suite = join(root, "suite");
      const imported = await cli([
        "bench",
        "import",
        "swe-skills-bench",
        layout,
        "--out",
        suite,
        "--repo-root",
        repoRoot,
        "--json",
      ]);
      expect(imported.code, imported.stderr).toBe(0);
      const summary = JSON.parse(imported.stdout) as {
        skills: number;
        requirements: number;
        problems: { path: string; message: string }[];
      };
      expect(summary).toMatchObject({ skills: 1, requirements: 2 });
      // The sample's other skills have no SKILL.md in the trimmed copy: reported, not imported.
      expect(summary.problems.some((problem) => problem.message.includes('"xlsx"'))).toBe(true);

      server = await startScriptedServer({
        script: {
          rules: [
            // After the Write's tool result: finish.
            { match: { toolResult: "resilient\\.py" }, reply: { text: "Done." } },
            // batch1, assisted, after the Skill call: the skill's body has arrived.
            {
              match: { lastUserMessage: "Build fault-tolerant Python applications" },
              times: 1,
              reply: write(COMPLETE),
            },
            // batch1, assisted (the skill is listed): load it first.
            {
              match: {
                lastUserMessage: `- ${SKILL}: [\\s\\S]*Implement Resilient Transport Layer for httpx`,
              },
              times: 1,
              reply: { toolCalls: [{ name: "Skill", input: { skill: SKILL } }] },
            },
            {
              match: { lastUserMessage: "Implement Resilient Transport Layer for httpx" },
              reply: write(WITHOUT_CIRCUIT),
            },
            {
              match: { lastUserMessage: "Implement a Resilient HTTP Transport Layer" },
              reply: write(COMPLETE),
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const runDir = join(root, "run");
      const run = await runSuite({
        suite,
        runDir,
        sandbox: bubblewrap as BubblewrapSandbox,
        cacheDir: join(root, "cache"),
        modelOverride: "anthropic:claude-haiku-4-5",
        concurrency: 2,
        modelEndpoint: { baseUrl: server.url, apiKey: API_KEY },
      });
      expect(run.failed).toEqual([]);
      expect(run.executed).toBe(4);

      const store = ResultsStore.openReadOnly(runDir);
      let results: RunResult[];
      try {
        results = [...store.results()];
      } finally {
        store.close();
      }
      const byKey = new Map(
        results.map((result) => [`${result.requirement}/${result.arm}`, result]),
      );
      const figures = (key: string) => {
        const result = byKey.get(key);
        return [result?.passed, result?.total];
      };
      expect(figures("batch1/without")).toEqual([2, 3]);
      expect(figures("batch1/with")).toEqual([3, 3]);
      expect(figures("batch2/without")).toEqual([2, 2]);
      expect(figures("batch2/with")).toEqual([2, 2]);
      const failing = (key: string) =>
        byKey
          .get(key)
          ?.checks.filter((check) => check.status !== "pass")
          .map((check) => check.name.replace(/^.*::/, ""));
      expect(failing("batch1/without")).toEqual(["test_circuit_states"]);
      expect(failing("batch1/with")).toEqual([]);
      for (const result of results) {
        const trajectory = result.trajectory as Trajectory;
        expect(trajectory.harness).toBe("claude-code");
        expect(trajectory.status, trajectory.error).toBe("completed");
        expect(trajectory.skillsShownSource).toBe("agent-log");
        // The skill under test was shown to the model only where it was installed.
        expect(trajectory.skillsShown.includes(SKILL)).toBe(result.arm === "with");
        expect(trajectory.skills?.map((skill) => skill.name)).toEqual(
          result.arm === "with" ? [SKILL] : undefined,
        );
        const writes = trajectory.events.filter(
          (event) => event.type === "tool_call" && event.name === "Write",
        );
        expect(writes).toHaveLength(1);
        expect(result.requiredFiles).toEqual({ "httpx/_transports/resilient.py": true });
      }
      expect(byKey.get("batch1/with")?.skillActivated).toBe(true);
      expect(byKey.get("batch2/with")?.skillActivated).toBe(false);
      const stored = await readFile(join(runDir, "results.sqlite"));
      expect(stored.includes(Buffer.from(API_KEY))).toBe(false);

      const report = await reportRunDir(runDir);
      const profile = report.profiles[0];
      expect(profile?.skill).toBe(SKILL);
      const deltas = profile?.requirements.map((outcome) => [outcome.id, outcome.delta]);
      expect(deltas?.map(([id]) => id)).toEqual(["batch1", "batch2"]);
      expect(Number(deltas?.[0]?.[1])).toBeCloseTo(100 / 3, 6);
      expect(deltas?.[1]?.[1]).toBe(0);
      expect(profile?.delta).toBeCloseTo(50 / 3, 6);
      expect(profile?.p).toBe(1);
      expect(profile?.class).toBe("ineffective");
      expect(profile?.activation_rate).toBe(0.5);
    },
  );
});
