/**
 * `bench check` and the check before `bench run`, on a hand-made suite in the real bubblewrap
 * sandbox with real pytest (Debian's python3, through the prepared environment): a verifier
 * that fails to import its deliverable is ok (and at run time flagged deliverable-missing), one
 * that imports a helper nobody ships is broken (no agent time, stored broken-verifier), one that
 * already passes is weak, a skill whose pinned commit is missing is reported and skipped while
 * the rest runs, and an environment that failed is tried again by the next invocation.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHarnessV1 } from "../src/agents/index.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { runInProcess } from "./support/cli.js";
import { git } from "./support/git.js";
import { present, usableBubblewrap } from "./support/sandboxes.js";
import { newFilePatch, removeRunRoot } from "./support/suites.js";

const sandbox = await usableBubblewrap();
const hasPytest =
  existsSync("/usr/bin/python3") &&
  (await runProcess("/usr/bin/python3", ["-c", "import pytest"])).exitCode === 0;

let root: string;
let suite: string;
let commit: string;
let cacheDir: string;

const MISSING_COMMIT = "0123456789abcdef0123456789abcdef01234567";

async function write(path: string, text: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
}

/** A pytest verifier: `body` after `import sys; sys.path.insert(0, <repo>)`. */
async function requirement(skill: string, id: string, body: string, fileOperation: string) {
  const folder = join(suite, "skills", skill, "requirements", id);
  await write(
    join(folder, "requirement.md"),
    `## Requirement\n\nWrite ${fileOperation}.\n\n## File Operations\n\n- \`${fileOperation}\`\n\n## Acceptance Criteria\n\n- it works\n`,
  );
  await write(
    join(folder, "verifier", `test_${id}.py`),
    `import sys\nsys.path.insert(0, "/workspace/calc")\n${body}`,
  );
  await write(
    join(folder, "verifier.yaml"),
    `command: python -m pytest test_${id}.py -q -p no:cacheprovider --junitxml=junit.xml\nfiles: [test_${id}.py]\nmountPath: /workspace/tests\njunit: junit.xml\ntimeoutSeconds: 120\n`,
  );
}

async function skill(id: string, pinned: string, setup = "") {
  await write(
    join(suite, "skills", id, "skill.yaml"),
    `repository:\n  path: ${join(root, "calc")}\n  commit: ${pinned}\n  name: calc\n${setup}`,
  );
  await write(
    join(suite, "skills", id, "agent-skills", id, "SKILL.md"),
    `---\nname: ${id}\ndescription: Arithmetic for the calc package. Use when adding calc functions.\n---\n\n# ${id}\n\nAdd means +.\n`,
  );
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-check-"));
  cacheDir = join(root, "cache");
  const repository = join(root, "calc");
  await write(join(repository, "calc", "__init__.py"), "");
  await write(join(repository, "calc", "version.py"), "VERSION = '1.0'\n");
  await git(repository, "init", "-q", "-b", "main");
  await git(repository, "add", "-A");
  await git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  commit = await git(repository, "rev-parse", "HEAD");

  suite = join(root, "suite");
  await write(
    join(suite, "suite.yaml"),
    "format: skillsmith-suite/1\nname: calc\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
  );
  await skill("alpha", commit);
  // add: the deliverable calc/add.py is imported at collection, so untouched it cannot load.
  await requirement(
    "alpha",
    "add",
    "from calc.add import add\n\ndef test_small():\n    assert add(1, 2) == 3\n\ndef test_zero():\n    assert add(0, 5) == 5\n",
    "calc/add.py",
  );
  // helper: imports a module nobody provides (neither the requirement nor the environment).
  await requirement(
    "alpha",
    "helper",
    "from _missing_helper import ensure\n\ndef test_it():\n    assert ensure()\n",
    "calc/helper.py",
  );
  // version: 2 of 3 checks pass on the untouched repository.
  await requirement(
    "alpha",
    "version",
    "import os\nfrom calc.version import VERSION\n\ndef test_version():\n    assert VERSION == '1.0'\n\ndef test_package():\n    assert os.path.isdir('/workspace/calc/calc')\n\ndef test_new_file():\n    assert os.path.isfile('/workspace/calc/calc/changelog.txt')\n",
    "calc/changelog.txt",
  );
  // beta pins a commit that is not in the repository.
  await skill("beta", MISSING_COMMIT);
  await requirement("beta", "add", "def test_nothing():\n    assert True\n", "calc/add.py");
});

afterAll(async () => {
  await removeRunRoot(root);
});

const env = () => ({ ...process.env, SKILLSMITH_CACHE_DIR: cacheDir });

describe.skipIf(sandbox === undefined || !hasPytest)(
  "bench check and the check before bench run (needs bubblewrap and Debian python3 with pytest)",
  () => {
    it("validate-suite names the missing commit with file and line, and leaves the rest runnable", async () => {
      const result = await runInProcess(["bench", "validate-suite", suite, "--json"], {
        env: env(),
      });
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as {
        problems: {
          path: string;
          line?: number;
          field?: string;
          message: string;
          severity: string;
        }[];
        runnable: { skills: number; requirements: number };
      };
      const errors = report.problems.filter((problem) => problem.severity === "error");
      expect(errors).toEqual([
        {
          path: join(suite, "skills", "beta", "skill.yaml"),
          // skill.yaml line 3 is `  commit: …` (line 1 `repository:`, line 2 `path:`).
          line: 3,
          field: "repository.commit",
          // The message says what would fix it.
          message: `commit ${MISSING_COMMIT} does not exist in repository ${join(root, "calc")}: the pinned commit is unreachable — fix: pin a commit the repository has, or point at a copy (--repo-root, a fuller clone or bundle) that holds it`,
          severity: "error",
        },
      ]);
      expect(report.runnable).toMatchObject({ skills: 1, requirements: 3 });
    });

    it("classifies each requirement on the untouched repository", async () => {
      const result = await runInProcess(["bench", "check", suite, "--json"], { env: env() });
      expect(result.code, result.stderr).toBe(1);
      const { requirements } = JSON.parse(result.stdout) as {
        requirements: {
          skill: string;
          requirement: string;
          status: string;
          untouchedPassRatio: number | null;
          reason: string;
        }[];
      };
      const byId = new Map(
        requirements.map((entry) => [`${entry.skill}/${entry.requirement}`, entry]),
      );
      expect(byId.get("alpha/add")).toMatchObject({ status: "ok", untouchedPassRatio: 0 });
      expect(byId.get("alpha/add")?.reason).toMatch(
        /imports calc\.add, which the requirement asks to create \(calc\/add\.py\): failing as it should/,
      );
      expect(byId.get("alpha/helper")).toMatchObject({
        status: "broken",
        untouchedPassRatio: null,
      });
      expect(byId.get("alpha/helper")?.reason).toMatch(/_missing_helper cannot be imported/);
      // 2 of 3 pass untouched (worked out from the test file above): weak from one half.
      expect(byId.get("alpha/version")).toMatchObject({ status: "weak" });
      expect(byId.get("alpha/version")?.untouchedPassRatio).toBeCloseTo(2 / 3, 10);
      expect(byId.get("beta/add")).toMatchObject({ status: "broken", untouchedPassRatio: null });
      expect(byId.get("beta/add")?.reason).toMatch(/^missing commit: .*does not exist/);

      // Poison every cached measurement: all checks pass untouched, the ratio written as text.
      // Trusted, it would make `version` weak at any threshold; it is measured again instead.
      const checks = join(cacheDir, "checks");
      const entries = (await readdir(checks)).filter((name) => name.endsWith(".json"));
      expect(entries.length).toBeGreaterThan(0);
      for (const name of entries) {
        const entry = JSON.parse(await readFile(join(checks, name), "utf8"));
        expect(entry.format).toBe("skillsmith-check-measurement/1");
        entry.untouched = { ...entry.untouched, passed: 3, total: 3, passRatio: "1" };
        await writeFile(join(checks, name), JSON.stringify(entry));
      }
      // A higher threshold (flag over environment variable) makes the weak one ok.
      const strict = await runInProcess(
        ["bench", "check", suite, "--requirement", "version", "--weak-threshold", "0.9", "--json"],
        { env: { ...env(), SKILLSMITH_WEAK_THRESHOLD: "0.1" } },
      );
      expect(JSON.parse(strict.stdout).requirements).toEqual([
        expect.objectContaining({ requirement: "version", status: "ok" }),
      ]);
      // Measured, not the planted 3 of 3.
      expect(JSON.parse(strict.stdout).requirements[0].untouchedPassRatio).toBeCloseTo(2 / 3, 10);
      // And the poisoned entry was rewritten with what was measured: 2 of 3.
      const rewritten = await Promise.all(
        entries.map(async (name) => JSON.parse(await readFile(join(checks, name), "utf8"))),
      );
      expect(rewritten.map((entry) => entry.untouched.passRatio)).toContainEqual(2 / 3);
    }, 120_000);

    it("runs what can be measured, spends no agent time on the rest, and says so", async () => {
      const asked: string[] = [];
      const predictions = join(root, "predictions.jsonl");
      await writeFile(
        predictions,
        `${[
          { skill: "alpha", requirement: "add", arm: "without", patch: "" },
          {
            skill: "alpha",
            requirement: "add",
            arm: "with",
            patch: newFilePatch("calc/add.py", "def add(a, b): return a + b"),
          },
          { skill: "alpha", requirement: "helper", arm: "without", patch: "" },
          { skill: "alpha", requirement: "helper", arm: "with", patch: "" },
          { skill: "alpha", requirement: "version", arm: "without", patch: "" },
          {
            skill: "alpha",
            requirement: "version",
            arm: "with",
            patch: newFilePatch("calc/changelog.txt", "1.1"),
          },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n")}\n`,
      );
      const runDir = join(root, "run");
      const warnings: string[] = [];
      const summary = await runSuite({
        suite,
        runDir,
        predictions,
        cacheDir,
        sandbox: present(sandbox, "bubblewrap"),
        setupNetwork: "off",
        onWarning: (message) => warnings.push(message),
        // Counts the agent runs the runner asks for: none for broken or unmeasurable ones.
        harnessFor: (_configuration, defaults): AgentHarnessV1 => {
          const harness = defaults();
          return {
            ...harness,
            run: (request) => {
              asked.push(request.taskId ?? "");
              return harness.run(request);
            },
          };
        },
      });
      expect(asked.sort()).toEqual(["alpha/add", "alpha/add", "alpha/version", "alpha/version"]);
      expect(summary.unmeasured).toBe(4);
      expect(summary.environmentFailures).toEqual([
        { skill: "beta", reason: expect.stringMatching(/^missing commit:/) },
      ]);
      expect(warnings.some((warning) => /skill beta not run: missing commit/.test(warning))).toBe(
        true,
      );
      const store = ResultsStore.openReadOnly(runDir);
      const results = new Map(
        store
          .results()
          .map((result) => [`${result.skill}/${result.requirement}/${result.arm}`, result]),
      );
      store.close();
      // Untouched, the deliverable is missing: the run measured the agent's failure (0), flagged.
      expect(results.get("alpha/add/without")).toMatchObject({
        passRatio: 0,
        flags: ["deliverable-missing"],
      });
      expect(results.get("alpha/add/with")).toMatchObject({ passRatio: 1, flags: [] });
      expect(results.get("alpha/helper/with")).toMatchObject({
        flags: ["broken-verifier"],
        agentMs: 0,
      });
      expect(results.get("alpha/helper/with")?.verifier?.output).toMatch(/_missing_helper/);
      expect(results.get("alpha/version/with")).toMatchObject({
        passRatio: 1,
        flags: ["weak-verifier"],
      });
      expect(results.get("alpha/version/without")?.passed).toBe(2);
      expect(results.get("beta/add/without")).toMatchObject({
        flags: ["environment-failure"],
        agentMs: 0,
      });
      expect(results.get("beta/add/without")?.verifier?.evidence?.[0]).toMatch(/missing commit/);
    }, 180_000);

    it("tries a failed environment again on the next invocation, and runs it once it works", async () => {
      // The repository is not there yet (an empty folder where a clone belongs, as when a mirror
      // is still being copied); it appears between the two invocations. The suite is unchanged.
      const later = join(root, "calc-later");
      await mkdir(later, { recursive: true });
      const second = join(root, "suite-gamma");
      await write(
        join(second, "suite.yaml"),
        "format: skillsmith-suite/1\nname: gamma\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
      );
      await write(
        join(second, "skills", "gamma", "skill.yaml"),
        `repository:\n  path: ${later}\n  commit: ${commit}\n  name: calc\n  setup: none\n`,
      );
      await write(
        join(second, "skills", "gamma", "agent-skills", "gamma", "SKILL.md"),
        "---\nname: gamma\ndescription: Arithmetic for the calc package. Use when adding calc functions.\n---\n\n# gamma\n",
      );
      const folder = join(second, "skills", "gamma", "requirements", "one");
      await write(
        join(folder, "requirement.md"),
        "## Requirement\n\nNothing.\n\n## Acceptance Criteria\n\n- nothing\n",
      );
      await write(
        join(folder, "verifier", "check.sh"),
        "echo '<testsuite><testcase name=\"a\"/></testsuite>' > junit.xml\n",
      );
      await write(
        join(folder, "verifier.yaml"),
        "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
      );
      const predictions = join(root, "gamma.jsonl");
      await writeFile(
        predictions,
        '{"skill":"gamma","requirement":"one","arm":"without","patch":""}\n{"skill":"gamma","requirement":"one","arm":"with","patch":""}\n',
      );
      const runDir = join(root, "run-gamma");
      const run = () =>
        runInProcess(
          [
            "bench",
            "run",
            second,
            "--agent",
            "replay",
            "--predictions",
            predictions,
            "--out",
            runDir,
          ],
          {
            env: env(),
          },
        );
      const failed = await run();
      // Nothing could be measured: the summary says why, and the command says so (exit 1).
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(
        /environment of gamma failed \(not run\): environment failure: .*cannot clone repository/,
      );
      expect(failed.stdout).toMatch(/0 runs scored now, 2 stored unmeasured/);
      const before = ResultsStore.openReadOnly(runDir);
      expect(before.results().map((result) => result.flags)).toEqual([
        ["environment-failure"],
        ["environment-failure"],
      ]);
      expect(before.results()[0]?.verifier?.output).toMatch(
        /cannot clone repository .*does not exist/,
      );
      before.close();

      await rm(later, { recursive: true });
      await git(root, "clone", "-q", join(root, "calc"), later);
      const fixed = await run();
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.stdout).toMatch(/2 runs scored now, 0 stored unmeasured/);
      const after = ResultsStore.openReadOnly(runDir);
      // Measured now; its one check passes untouched too, so the re-run carries weak-verifier.
      expect(after.results().map((result) => [result.passRatio, result.flags])).toEqual([
        [1, ["weak-verifier"]],
        [1, ["weak-verifier"]],
      ]);
      after.close();
    }, 180_000);
  },
);
