/**
 * Harbor tasks as careful authors write them (issue 29), in the container sandbox: an image that
 * ends with a non-root `USER` and a verifier that must run as root, and a suite whose tasks fail
 * for different people's reasons (an image that cannot be built, a checker whose interpreter the
 * image lacks, a stub oracle) checked task by task with whose fault each is.
 *
 * Expected values by hand from the fixtures: test.sh scores two checks and writes reward 1 only
 * when both pass (data.txt kept, hello.txt holds "Hello, world"), else 0; solve.sh writes the
 * greeting, so the oracle reaches 1 and the untouched directory 0.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTasks, importHarbor, loadSuite, type TaskCheck } from "../src/bench/index.js";
import { environmentRecord, skillEnvironments } from "../src/bench/run/environments.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { availableContainerSandbox } from "./support/sandboxes.js";

const SOCKET = "/run/podman/podman.sock";
const BASE = "localhost/skillsmith-base:bookworm";
const sandbox = existsSync(SOCKET) ? await availableContainerSandbox() : undefined;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-harbor-tasks-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const CHECKS = [
  "import os",
  "def read(path):",
  "    try:",
  "        return open(path).read().strip()",
  "    except OSError:",
  "        return None",
  "ok = read('data.txt') == 'world' and read('hello.txt') == 'Hello, world'",
  "open('/logs/verifier/reward.txt', 'w').write('1' if ok else '0')",
  "",
].join("\n");

/** A task in Harbor's layout; the parts that differ between the tests are given. */
async function makeTask(
  root: string,
  name: string,
  parts: { dockerfile: string; toml?: string[]; testSh?: string; solveSh?: string },
): Promise<void> {
  await writeTree(join(root, name), {
    "instruction.md": "Write `hello.txt` in the working directory: a greeting for data.txt.\n",
    "task.toml": ['version = "1.0"', ...(parts.toml ?? []), ""].join("\n"),
    "environment/Dockerfile": parts.dockerfile,
    "environment/data.txt": "world\n",
    "tests/test.sh":
      parts.testSh ?? "#!/bin/bash\nmkdir -p /logs/verifier\npython3 /tests/checks.py\n",
    "tests/checks.py": CHECKS,
    "solution/solve.sh":
      parts.solveSh ?? '#!/bin/bash\nset -e\nprintf "Hello, %s" "$(cat data.txt)" > hello.txt\n',
  });
}

const NON_ROOT_DOCKERFILE = [
  `FROM ${BASE}`,
  "RUN useradd --create-home --uid 1234 app",
  "WORKDIR /app",
  "COPY data.txt /app/data.txt",
  "RUN chown -R app:app /app",
  "USER app",
  "",
].join("\n");

describe.skipIf(sandbox === undefined)(
  `Harbor tasks as written (needs ${SOCKET} and ${BASE})`,
  () => {
    it("a non-root USER image with [verifier] user = root: oracle 1, untouched 0, each as the user it asks for", async () => {
      const tasks = join(scratch, "non-root-tasks");
      await makeTask(tasks, "as-app", {
        dockerfile: NON_ROOT_DOCKERFILE,
        toml: [
          "[verifier]",
          'user = "root"',
          "timeout_sec = 60.0",
          "[agent]",
          "timeout_sec = 60.0",
          "[environment]",
          "storage_mb = 10240",
        ],
        // The verifier refuses to score unless it runs as root, as the task asks.
        testSh:
          '#!/bin/bash\n[ "$(id -u)" = 0 ] || { echo "test.sh must run as root, runs as $(id -un)" >&2; exit 1; }\nmkdir -p /logs/verifier\npython3 /tests/checks.py\n',
        // The oracle runs as the image's user, and the working directory is writable for it.
        solveSh:
          '#!/bin/bash\nset -e\n[ "$(id -un)" = app ] || { echo "solve.sh runs as $(id -un), not app" >&2; exit 3; }\nprintf "Hello, %s" "$(cat data.txt)" > hello.txt\n',
      });
      const suite = join(scratch, "non-root-suite");
      const imported = await importHarbor([tasks], { out: suite });
      expect(imported.problems.map((problem) => problem.message)).toEqual([
        expect.stringMatching(/^no skill:/),
      ]);
      const checks = await checkTasks({
        suite,
        sandbox: sandbox as NonNullable<typeof sandbox>,
        cacheDir: join(scratch, "cache-non-root"),
      });
      expect(checks).toHaveLength(1);
      const [check] = checks as [TaskCheck];
      expect(check.problems).toEqual([]);
      expect(check).toMatchObject({
        status: "ok",
        ok: true,
        oracle: { passRatio: 1, status: "completed" },
        untouched: { passRatio: 0 },
      });
      // The field it ignores is in the environment record a run's manifest stores.
      const loaded = await loadSuite(suite, { controlsOnly: true });
      const outcome = await skillEnvironments({
        sandbox: sandbox as NonNullable<typeof sandbox>,
        cacheDir: join(scratch, "cache-non-root"),
      })(loaded.skills[0] as NonNullable<(typeof loaded.skills)[0]>);
      expect(environmentRecord(outcome).notes).toContain(
        "task.toml field ignored: [environment] storage_mb = 10240: no disk limit is applied here",
      );
      // The none control of a reward-scored task: the untouched directory must score 0, and
      // does (no check measurement stands in for it: only a pass-ratio verifier has one).
      const none = await runInProcess(
        [
          "bench",
          "run",
          suite,
          "--agent",
          "none",
          "--sandbox",
          "container",
          "--out",
          join(scratch, "run-none-non-root"),
        ],
        {
          cwd: scratch,
          env: { ...process.env, SKILLSMITH_CACHE_DIR: join(scratch, "cache-non-root") },
        },
      );
      expect(none.code, none.stderr).toBe(0);
      expect(none.stdout).toMatch(/none\S* +as-app +\S+ +0 +0 +as-expected/);
      expect(none.stdout).toMatch(/controls \(.*\): 2 of 2 as expected/);
    }, 480_000);

    it("bench check-tasks goes on past an unbuildable task and says whose fault each failure is", async () => {
      const tasks = join(scratch, "mixed-tasks");
      // Its build step needs pip, which the image does not have: the environment's fault.
      await makeTask(tasks, "a-unbuildable", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nRUN pip install numpy\nCOPY data.txt /app/data.txt\n`,
      });
      // test.sh runs pytest through uvx, which the image lacks: no reward, the environment's fault.
      await makeTask(tasks, "b-no-checker", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nCOPY data.txt /app/data.txt\n`,
        testSh: "#!/bin/bash\nmkdir -p /logs/verifier\nuvx pytest /tests/test_outputs.py\n",
      });
      // solve.sh is a stub that gives up: the oracle's fault, with its own words shown.
      await makeTask(tasks, "c-stub-oracle", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nCOPY data.txt /app/data.txt\n`,
        solveSh: '#!/bin/bash\necho "TODO: write the reference solution" >&2\nexit 1\n',
      });
      await makeTask(tasks, "d-sound", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nCOPY data.txt /app/data.txt\n`,
      });
      // No tests/test.sh: nothing can score it, the verifier's fault; the others are still checked.
      await makeTask(tasks, "e-no-verifier", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nCOPY data.txt /app/data.txt\n`,
      });
      await unlink(join(tasks, "e-no-verifier", "tests", "test.sh"));
      // No solution/solve.sh: the oracle cannot run, the oracle's fault.
      await makeTask(tasks, "f-no-oracle", {
        dockerfile: `FROM ${BASE}\nWORKDIR /app\nCOPY data.txt /app/data.txt\n`,
      });
      await unlink(join(tasks, "f-no-oracle", "solution", "solve.sh"));
      const suite = join(scratch, "mixed-suite");
      const imported = await importHarbor([tasks], { out: suite });
      expect(imported.skills).toBe(6);
      const environment = { SKILLSMITH_CACHE_DIR: join(scratch, "cache-mixed") };
      const first = await runInProcess(["bench", "check-tasks", suite, "--json"], {
        cwd: scratch,
        env: environment,
      });
      expect(first.code).toBe(1);
      const checks = JSON.parse(first.stdout) as TaskCheck[];
      const bySkill = new Map(checks.map((check) => [check.skill, check]));
      expect([...bySkill.keys()]).toEqual([
        "a-unbuildable",
        "b-no-checker",
        "c-stub-oracle",
        "d-sound",
        "e-no-verifier",
        "f-no-oracle",
      ]);
      expect(bySkill.get("a-unbuildable")).toMatchObject({
        status: "environment-failure",
        ok: false,
        fault: "environment",
      });
      expect(bySkill.get("a-unbuildable")?.problems.join(" ")).toMatch(/pip/);
      // One line per problem, the build's last lines joined: readable in a list.
      expect(bySkill.get("a-unbuildable")?.problems[0]).not.toContain("\n");
      const noChecker = bySkill.get("b-no-checker");
      expect(noChecker).toMatchObject({ status: "broken", ok: false, fault: "environment" });
      expect(noChecker?.problems.join(" ")).toMatch(/uvx: command not found/);
      const stub = bySkill.get("c-stub-oracle");
      expect(stub).toMatchObject({
        status: "broken",
        fault: "oracle",
        untouched: { passRatio: 0 },
      });
      expect(stub?.problems.join(" ")).toMatch(/TODO: write the reference solution/);
      expect(bySkill.get("d-sound")).toMatchObject({
        status: "ok",
        ok: true,
        oracle: { passRatio: 1 },
        untouched: { passRatio: 0 },
      });
      expect(bySkill.get("e-no-verifier")).toMatchObject({
        status: "broken",
        ok: false,
        fault: "verifier",
      });
      expect(bySkill.get("e-no-verifier")?.problems.join(" ")).toMatch(/test\.sh.*does not exist/);
      const noOracle = bySkill.get("f-no-oracle");
      expect(noOracle).toMatchObject({ status: "broken", ok: false, fault: "oracle" });
      expect(noOracle?.problems.join(" ")).toMatch(/no reference solution/);
      // Progress on stderr, one line per task (the one the loader left out first, it needs no
      // run); the count of unscorable tasks at the end.
      expect(first.stderr).toMatch(/\[1\/6 \d+s\] FAIL e-no-verifier\/e-no-verifier: not run/);
      expect(first.stderr).toMatch(/\[2\/6 \d+s\] ENV {2}a-unbuildable\/a-unbuildable/);
      expect(first.stderr).toMatch(/\[5\/6 \d+s\] ok {3}d-sound\/d-sound/);
      expect(first.stderr).toMatch(/5 of 6 task requirement\(s\) cannot be scored/);
      // The stored control run holds the oracle's whole output.
      expect(stub?.oracle?.runFile).toBeDefined();

      // Again, one task selected: read from the cache, nothing else checked.
      const again = await runInProcess(
        ["bench", "check-tasks", suite, "--task", "d-sound", "--json"],
        { cwd: scratch, env: environment },
      );
      expect(again.code).toBe(0);
      const cached = JSON.parse(again.stdout) as TaskCheck[];
      expect(cached.map((check) => [check.skill, check.ok, check.cached])).toEqual([
        ["d-sound", true, true],
      ]);
    }, 400_000);
  },
);
