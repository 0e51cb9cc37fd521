/**
 * Harbor tasks that actually run (issue 18), end to end in the container sandbox: tasks authored
 * here in Harbor's format (task.toml, instruction.md, environment/Dockerfile + context +
 * skills/, tests/test.sh, solution/solve.sh) FROM the local base image, imported with
 * `importHarbor`, then run by `runSuite`: the image is built from the task's Dockerfile, the
 * oracle runs solve.sh, test.sh writes the reward, and a scripted model drives the builtin agent
 * through a paired with/without run whose difference is the task's own skill.
 *
 * Expected values are by hand from the fixtures: each test.sh scores two checks, (a) data.txt
 * from the image is still in the working directory, (b) hello.txt holds "Hello, <data>". The
 * untouched directory passes (a) only; solve.sh makes both pass.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness } from "../src/agents/index.js";
import type { BenchReport } from "../src/bench/analysis/report-types.js";
import { importHarbor, ResultsStore, reportRunDir, runSuite } from "../src/bench/index.js";
import type { RunResult } from "../src/bench/store/results.js";
import { buildTaskImage, type ContainerSandbox } from "../src/env/index.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { availableContainerSandbox } from "./support/sandboxes.js";

const SOCKET = "/run/podman/podman.sock";
const SLICE = join(import.meta.dirname, "..", "..", "shared", "fixtures", "skillsbench-slice");
const sandbox = existsSync(SOCKET) ? await availableContainerSandbox() : undefined;
const missing = sandbox === undefined;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-harbor-run-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const SKILL = "greeting-format";
const skillMarkdown = `---\nname: ${SKILL}\ndescription: How greetings are written in these tasks; use when asked to write a greeting file.\n---\n# Greetings\n\nWrite \`Hello, \` followed by the contents of data.txt.\n`;

/** Two checks, written as CTRF and as a reward in the given way. */
function checksScript(reward: "json" | "txt" | "none"): string {
  const write =
    reward === "json"
      ? `open('/logs/verifier/reward.json', 'w').write(json.dumps({'reward': passed / 2}))`
      : reward === "txt"
        ? `open('/logs/verifier/reward.txt', 'w').write(str(passed / 2))`
        : "pass  # this verifier never writes a reward";
  return [
    "import json, os",
    "def read(path):",
    "    try:",
    "        return open(path).read().strip()",
    "    except OSError:",
    "        return None",
    "data = read('data.txt')",
    "results = [",
    "    ('data_kept', data == 'world'),",
    "    ('greeting', read('hello.txt') == 'Hello, world'),",
    "]",
    "passed = sum(1 for _, ok in results if ok)",
    "tests = [{'name': name, 'status': 'passed' if ok else 'failed', 'duration': 0} for name, ok in results]",
    "json.dump({'results': {'tool': {'name': 'hand'}, 'summary': {'tests': 2}, 'tests': tests}}, open('/logs/verifier/ctrf.json', 'w'))",
    write,
    "",
  ].join("\n");
}

/** A sound task (reward.json) and one whose test.sh writes no reward, from the local base. */
async function soundAndSilentTasks(root: string): Promise<void> {
  await makeTask(root, "greet-json", {
    from: "localhost/skillsmith-base:bookworm",
    reward: "json",
  });
  await makeTask(root, "greet-silent", {
    from: "localhost/skillsmith-base:bookworm",
    reward: "none",
  });
}

async function makeTask(
  root: string,
  name: string,
  options: { from: string; reward: "json" | "txt" | "none" },
): Promise<string> {
  const task = join(root, name);
  await writeTree(task, {
    "instruction.md": "Write `hello.txt` in the working directory: a greeting for data.txt.\n",
    "task.toml": [
      'version = "1.0"',
      "[verifier]",
      "timeout_sec = 60.0",
      "[agent]",
      "timeout_sec = 120.0",
      "[environment]",
      "build_timeout_sec = 120.0",
      "cpus = 1",
      "memory_mb = 512",
      "allow_internet = false",
      "",
    ].join("\n"),
    "environment/Dockerfile": [
      `FROM ${options.from}`,
      "WORKDIR /app",
      "COPY data.txt /app/data.txt",
      "COPY skills /root/.claude/skills",
      "",
    ].join("\n"),
    "environment/data.txt": "world\n",
    [`environment/skills/${SKILL}/SKILL.md`]: skillMarkdown,
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\npython3 /tests/checks.py\nexit 0\n",
    "tests/checks.py": checksScript(options.reward),
    "solution/solve.sh": '#!/bin/bash\nset -e\nprintf "Hello, %s" "$(cat data.txt)" > hello.txt\n',
  });
  return task;
}

function byKey(results: readonly RunResult[], skill: string, arm: string): RunResult {
  const found = results.find((result) => result.skill === skill && result.arm === arm);
  if (found === undefined) throw new Error(`no result for ${skill}/${arm}`);
  return found;
}

function resultsOf(runDir: string): RunResult[] {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store.results();
  } finally {
    store.close();
  }
}

describe.skipIf(missing)(`Harbor tasks in the container sandbox (needs ${SOCKET})`, () => {
  let suite: string;
  const mapping = { "ubuntu:24.04": "localhost/skillsmith-base:bookworm" };

  beforeAll(async () => {
    const tasks = join(scratch, "tasks");
    await makeTask(tasks, "greet-json", {
      from: "localhost/skillsmith-base:bookworm",
      reward: "json",
    });
    // FROM an image this machine cannot pull: runs only through the --base-image mapping.
    await makeTask(tasks, "greet-txt", { from: "ubuntu:24.04", reward: "txt" });
    await makeTask(tasks, "greet-silent", {
      from: "localhost/skillsmith-base:bookworm",
      reward: "none",
    });
    suite = join(scratch, "suite");
    const imported = await importHarbor([tasks], { out: suite });
    expect(imported.skills).toBe(3);
  });

  it("builds a task image once per content hash, and a failed build names its step and is not rebuilt by a retry", async () => {
    const docker = (sandbox as ContainerSandbox).docker;
    const context = join(scratch, "contexts", "cached");
    const marker = `${Date.now()}`;
    await writeTree(context, { "data.txt": `${marker}\n` });
    const dockerfile =
      "FROM localhost/skillsmith-base:bookworm\nWORKDIR /app\nCOPY data.txt /app/\n";
    const first = await buildTaskImage({ docker, contextDir: context, dockerfile, taskName: "t" });
    const again = await buildTaskImage({ docker, contextDir: context, dockerfile, taskName: "t" });
    expect(first.reused).toBe(false);
    expect(again).toMatchObject({ reused: true, image: first.image });
    // A changed context file is another image.
    await writeTree(context, { "data.txt": `${marker}-changed\n` });
    const changed = await buildTaskImage({
      docker,
      contextDir: context,
      dockerfile,
      taskName: "t",
    });
    expect(changed.image).not.toBe(first.image);
    await docker.getImage(first.image).remove({ force: true });
    await docker.getImage(changed.image).remove({ force: true });

    const failing = `FROM localhost/skillsmith-base:bookworm\nRUN echo ${marker} && exit 3\n`;
    let logs = 0;
    const build = () =>
      buildTaskImage({
        docker,
        contextDir: context,
        dockerfile: failing,
        taskName: "broken-task",
        onLog: () => {
          logs += 1;
        },
      });
    await expect(build()).rejects.toThrow(/environment of task broken-task failed: .*RUN echo/s);
    const logsOfFirst = logs;
    expect(logsOfFirst).toBeGreaterThan(0);
    await expect(build()).rejects.toThrow(/broken-task failed/);
    expect(logs).toBe(logsOfFirst);
  });

  it("without --base-image, a FROM image that is not local stops the run naming it", async () => {
    await expect(
      runSuite({
        suite,
        runDir: join(scratch, "run-unmapped"),
        sandbox: sandbox as ContainerSandbox,
        cacheDir: join(scratch, "cache"),
        agentOverride: "none",
        configs: ["oracle"],
      }),
    ).rejects.toThrow(
      /^1 environment-only task cannot be built here: greet-txt starts FROM ubuntu:24\.04\. .*--base-image ubuntu:24\.04=localhost\/skillsmith-base:bookworm$/,
    );
    // The CLI says the same as a usage error (exit 2, no stack trace); a malformed mapping too.
    const cli = (extra: string[]) =>
      runInProcess(
        [
          "bench",
          "run",
          suite,
          "--sandbox",
          "container",
          "--agent",
          "none",
          "--config",
          "oracle",
        ].concat(["--out", join(scratch, "run-cli")], extra),
        { cwd: scratch, env: { SKILLSMITH_CACHE_DIR: join(scratch, "cache") } },
      );
    const unmapped = await cli([]);
    expect(unmapped.code).toBe(2);
    expect(unmapped.stderr).toMatch(/greet-txt starts FROM ubuntu:24\.04/);
    expect(unmapped.stderr).not.toMatch(/\n\s+at /);
    const malformed = await cli(["--base-image", "ubuntu:24.04"]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--base-image expects <image>=<local image>/);
  });

  it("the oracle's solve.sh passes every task with a reward; the untouched workspace fails; a silent test.sh is reward-missing", async () => {
    const oracleDir = join(scratch, "run-oracle");
    const oracle = await runSuite({
      suite,
      runDir: oracleDir,
      sandbox: sandbox as ContainerSandbox,
      cacheDir: join(scratch, "cache"),
      configs: ["oracle"],
      baseImages: mapping,
      // The run path itself, without the gate's task controls (tested on their own below).
      check: false,
    });
    expect(oracle.failed).toEqual([]);
    const manifest = JSON.parse(await readFile(join(oracleDir, "manifest.json"), "utf8"));
    expect(manifest.baseImages).toEqual(mapping);
    const solved = resultsOf(oracleDir);
    for (const arm of ["without", "with"]) {
      const json = byKey(solved, "greet-json", arm);
      expect(json.passRatio).toBe(1);
      expect(json.flags).toEqual(["reward-file"]);
      expect(json.verifier?.source).toBe("reward");
      // Per-test detail from the CTRF report beside the reward.
      expect(json.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
        "data_kept:pass",
        "greeting:pass",
      ]);
      expect(byKey(solved, "greet-txt", arm).passRatio).toBe(1);
      const silent = byKey(solved, "greet-silent", arm);
      expect(silent.flags).toContain("reward-missing");
      expect(silent.verifier?.source).toBe("none");
      expect(silent.verifier?.evidence?.join(" ")).toMatch(/neither reward\.json nor reward\.txt/);
    }

    const untouchedDir = join(scratch, "run-untouched");
    await runSuite({
      suite,
      runDir: untouchedDir,
      sandbox: sandbox as ContainerSandbox,
      cacheDir: join(scratch, "cache"),
      configs: ["oracle"],
      agentOverride: "none",
      baseImages: mapping,
      // The run path itself, without the gate's task controls (tested on their own below).
      check: false,
    });
    const untouched = resultsOf(untouchedDir);
    // One of two checks passes on the untouched directory: reward 1/2.
    expect(byKey(untouched, "greet-json", "without").passRatio).toBe(0.5);
    expect(byKey(untouched, "greet-txt", "with").passRatio).toBe(0.5);
    expect(byKey(untouched, "greet-json", "with").checks.map((check) => check.status)).toEqual([
      "pass",
      "fail",
    ]);
  });

  it("bench run's gate runs the task controls first: a task whose oracle cannot pass is stored broken-verifier, not scored", async () => {
    const tasks = join(scratch, "gate-tasks");
    await soundAndSilentTasks(tasks);
    // The deliverable lives outside the working directory, as in SkillsBench's syzkaller task
    // (/opt/syzkaller/...): the agent's container writes it, the verifier's fresh container
    // never sees it, so no agent could pass, and both arms failing alike would read as
    // "Ineffective" if the task were scored.
    const outside = await makeTask(tasks, "greet-outside", {
      from: "localhost/skillsmith-base:bookworm",
      reward: "json",
    });
    await writeTree(outside, {
      "environment/Dockerfile": [
        "FROM localhost/skillsmith-base:bookworm",
        "RUN mkdir -p /opt/greeting && chmod 777 /opt/greeting",
        "WORKDIR /app",
        "COPY data.txt /app/data.txt",
        "",
      ].join("\n"),
      "solution/solve.sh":
        '#!/bin/bash\nset -e\nprintf "Hello, %s" "$(cat data.txt)" > /opt/greeting/hello.txt\n',
      "tests/checks.py": checksScript("json").replace(
        "read('hello.txt')",
        "read('/opt/greeting/hello.txt')",
      ),
    });
    const gateSuite = join(scratch, "gate-suite");
    expect((await importHarbor([tasks], { out: gateSuite })).skills).toBe(3);
    const lines: string[] = [];
    const run = (runDir: string) =>
      runSuite({
        suite: gateSuite,
        runDir,
        sandbox: sandbox as ContainerSandbox,
        cacheDir: join(scratch, "cache"),
        configs: ["oracle"],
        baseImages: mapping,
        onLog: (line) => lines.push(line),
      });
    const runDir = join(scratch, "run-gate");
    await run(runDir);
    const results = resultsOf(runDir);
    for (const arm of ["without", "with"]) {
      // A sound task runs and is scored as before.
      expect(byKey(results, "greet-json", arm)).toMatchObject({
        passRatio: 1,
        flags: ["reward-file"],
      });
      const silent = byKey(results, "greet-silent", arm);
      expect(silent.flags).toEqual(["broken-verifier"]);
      expect(silent.verifier?.evidence?.join(" ")).toMatch(/the oracle run wrote no reward/);
      const unreachable = byKey(results, "greet-outside", arm);
      expect(unreachable.flags).toEqual(["broken-verifier"]);
      // The untouched run scores 1 of 2 checks (data.txt kept), and the oracle no more.
      expect(unreachable.verifier?.evidence?.join(" ")).toMatch(/the oracle reaches 0\.5, not 1/);
    }
    const report = await reportRunDir(runDir);
    // The oracle reads no skill: its runs are controls, never a skill verdict.
    expect(report.profiles).toEqual([]);
    const control = (skill: string) => report.controls?.find((entry) => entry.skill === skill);
    expect(control("greet-json")?.status).toBe("as-expected");
    expect(control("greet-outside")?.status).toBe("unmeasured");
    expect(control("greet-outside")?.says).toMatch(/broken verifier/);
    expect(lines.filter((line) => line.includes("[cached]"))).toEqual([]);

    // The next invocation reads each task's check from the cache instead of running it again.
    lines.length = 0;
    await run(join(scratch, "run-gate-again"));
    expect(lines.filter((line) => /^check-tasks .*\[cached\]$/.test(line))).toHaveLength(3);
  });

  it("--no-check: an oracle whose solve.sh exits 1 and a test.sh that writes no reward are controls that could not be measured, exit 1", async () => {
    const tasks = join(scratch, "no-check-tasks");
    await soundAndSilentTasks(tasks);
    const stub = await makeTask(tasks, "greet-stub", {
      from: "localhost/skillsmith-base:bookworm",
      reward: "json",
    });
    await writeTree(stub, {
      "solution/solve.sh": "#!/bin/bash\necho 'TODO: write the solution' >&2\nexit 1\n",
    });
    const noCheckSuite = join(scratch, "no-check-suite");
    expect((await importHarbor([tasks], { out: noCheckSuite })).skills).toBe(3);
    const cli = await runInProcess(
      [
        "bench",
        "run",
        noCheckSuite,
        "--sandbox",
        "container",
        "--config",
        "oracle",
        "--no-check",
        "--out",
        join(scratch, "run-no-check"),
        "--json",
      ],
      { cwd: scratch, env: { SKILLSMITH_CACHE_DIR: join(scratch, "cache") } },
    );
    expect(cli.code, cli.stderr).toBe(1);
    const { report } = JSON.parse(cli.stdout) as { report: BenchReport };
    // No verdict at all: the oracle is a control.
    expect(report.profiles).toEqual([]);
    const control = (skill: string) => report.controls?.find((entry) => entry.skill === skill);
    expect(control("greet-json")).toMatchObject({ status: "as-expected", score: 1 });
    expect(control("greet-stub")).toMatchObject({ status: "unmeasured", score: null });
    expect(control("greet-stub")?.says).toMatch(
      /the control agent failed: solve\.sh exited with 1/,
    );
    expect(control("greet-silent")).toMatchObject({ status: "unmeasured", score: null });
    expect(control("greet-silent")?.says).toMatch(/reward missing/);
    expect(cli.stderr).toMatch(/4 of 6 runs could not be measured: control oracle failed \(4\)/);
  });

  it("bench check-tasks: the oracle reaches 1 and the untouched directory does not; a silent test.sh fails the check", async () => {
    const result = await runInProcess(
      [
        "bench",
        "check-tasks",
        suite,
        "--base-image",
        `ubuntu:24.04=${mapping["ubuntu:24.04"]}`,
        "--json",
      ],
      { cwd: scratch, env: { SKILLSMITH_CACHE_DIR: join(scratch, "cache") } },
    );
    expect(result.code).toBe(1);
    const checks = JSON.parse(result.stdout) as {
      skill: string;
      ok: boolean;
      oracle?: { passRatio: number };
      untouched: { passRatio: number };
      problems: string[];
    }[];
    const bySkill = new Map(checks.map((check) => [check.skill, check]));
    for (const skill of ["greet-json", "greet-txt"]) {
      expect(bySkill.get(skill)).toMatchObject({
        ok: true,
        oracle: { passRatio: 1 },
        untouched: { passRatio: 0.5 },
        problems: [],
      });
    }
    const silent = bySkill.get("greet-silent");
    expect(silent?.ok).toBe(false);
    expect(silent?.problems).toEqual([
      "the oracle run wrote no reward: the verifier wrote neither reward.json nor reward.txt",
      "the untouched run wrote no reward: the verifier wrote neither reward.json nor reward.txt",
    ]);
  });

  it("an agent that writes /logs/verifier/reward.json in advance gains nothing", async () => {
    const runDir = join(scratch, "run-forger");
    // The "agent" runs its commands in the real sandbox, as any agent's processes do: it plants
    // a perfect reward where test.sh would write one, and a fake CTRF report.
    await runSuite({
      suite,
      runDir,
      sandbox: sandbox as ContainerSandbox,
      cacheDir: join(scratch, "cache"),
      configs: ["oracle"],
      baseImages: mapping,
      // The run path itself, without the gate's task controls (tested on their own below).
      check: false,
      harnessFor: () => ({
        specificationVersion: "v1",
        name: "forger",
        run: async (request) => {
          const started = performance.now();
          const result = await request.sandbox.exec({
            command: [
              "sh",
              "-c",
              `mkdir -p /logs/verifier && echo '{"reward": 1}' > /logs/verifier/reward.json && echo 1 > /logs/verifier/reward.txt && echo '{"results":{"tests":[{"name":"greeting","status":"passed"}]}}' > /logs/verifier/ctrf.json && ls /logs/verifier`,
            ],
            workspace: request.workspace,
            workspaceMountPath: request.workspaceMountPath ?? request.workspace,
            network: "none",
            limits: { timeoutMs: 30_000 },
          });
          const none = await createHarness("none").run(request);
          return {
            ...none,
            harness: "forger",
            rawLog: `${result.exitCode} ${result.stdout}`,
            wallTimeMs: performance.now() - started,
          };
        },
      }),
    });
    const results = resultsOf(runDir);
    for (const arm of ["without", "with"]) {
      const forged = byKey(results, "greet-json", arm);
      // The planting itself worked inside the agent's container...
      expect((forged.trajectory as { rawLog: string }).rawLog).toMatch(/^0 .*reward\.json/s);
      // ...and the verifier still scores only what test.sh wrote: 1 of 2 checks.
      expect(forged.passRatio).toBe(0.5);
      expect(forged.checks.find((check) => check.name === "greeting")?.status).toBe("fail");
      // A verifier that writes no reward stays reward-missing, never the planted 1.
      expect(byKey(results, "greet-silent", arm).flags).toContain("reward-missing");
      expect(byKey(results, "greet-silent", arm).passRatio).toBe(0);
    }
  });

  it.skipIf(!existsSync(SLICE))(
    "the real SkillsBench slice imports, and the run names every image this machine cannot get (needs ../shared/fixtures/skillsbench-slice)",
    async () => {
      const out = join(scratch, "slice-suite");
      const imported = await importHarbor([SLICE], { out });
      expect(imported.skills).toBe(5);
      // From the fixture's Dockerfiles, read by hand: four start FROM ubuntu:24.04, suricata's
      // FROM jasonish/suricata:7.0.11; none is on this machine and no registry is reachable.
      const run = (baseImages?: Record<string, string>) =>
        runSuite({
          suite: out,
          runDir: join(scratch, `slice-run-${baseImages === undefined ? "plain" : "mapped"}`),
          sandbox: sandbox as ContainerSandbox,
          cacheDir: join(scratch, "cache"),
          configs: ["oracle"],
          ...(baseImages === undefined ? {} : { baseImages }),
        });
      await expect(run()).rejects.toThrow(
        "5 environment-only tasks cannot be built here: flood-risk-analysis starts FROM ubuntu:24.04; lake-warming-attribution starts FROM ubuntu:24.04; r2r-mpc-control starts FROM ubuntu:24.04; suricata-custom-exfil starts FROM jasonish/suricata:7.0.11; syzkaller-ppdev-syzlang starts FROM ubuntu:24.04.",
      );
      // Mapped, the ubuntu tasks pass this check (their pip steps then fail without PyPI, which
      // the README reports); suricata's image has no local stand-in and stays named.
      await expect(run(mapping)).rejects.toThrow(
        /^1 environment-only task cannot be built here: suricata-custom-exfil starts FROM jasonish\/suricata:7\.0\.11\. .*--base-image jasonish\/suricata:7\.0\.11=/,
      );
    },
  );

  describe("SkillsBench mode: the task's own skills in the with arm only", () => {
    let server: ScriptedServer | undefined;
    afterAll(async () => {
      await server?.close();
    });

    it("a scripted builtin agent solves the task only when the task's skill is installed", async () => {
      // The model writes the right greeting only when its system prompt lists the task's skill,
      // which the builtin agent does in the with arm alone.
      server = await startScriptedServer({
        script: {
          rules: [
            { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done." } },
            {
              match: { system: SKILL },
              reply: {
                toolCalls: [
                  {
                    name: "run_command",
                    input: { command: 'printf "Hello, %s" "$(cat data.txt)" > hello.txt' },
                  },
                ],
              },
            },
            {
              match: { lastUserMessage: "hello\\.txt" },
              reply: {
                toolCalls: [{ name: "run_command", input: { command: "echo hi > hello.txt" } }],
              },
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const runDir = join(scratch, "run-builtin");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: sandbox as ContainerSandbox,
        cacheDir: join(scratch, "cache"),
        configs: ["claude-code"],
        agentOverride: "builtin",
        modelOverride: "anthropic:claude-haiku-4-5",
        baseImages: mapping,
        modelEndpoint: { baseUrl: `${server.url}/v1`, apiKey: "sk-test-harbor-0123456789abcdef" },
      });
      expect(summary.failed).toEqual([]);
      const results = resultsOf(runDir);
      const without = byKey(results, "greet-json", "without");
      const withSkill = byKey(results, "greet-json", "with");
      // Without: "hi" is the wrong greeting, 1 of 2 checks. With: both.
      expect(without.passRatio).toBe(0.5);
      expect(withSkill.passRatio).toBe(1);
      expect(without.trajectory).toMatchObject({ skillsShown: [] });
      expect((withSkill.trajectory as { skillsShown: string[] }).skillsShown).toEqual([SKILL]);
      // The same paired statistics as every suite: d = 100·(1 − 0.5) = 50 per task; with one
      // pair the exact sign-flip p is 1 (both sign assignments reach |50|), so Ineffective.
      // Both arms of the silent task lack a reward: left out of the verdict, not scored 0.
      const report = await reportRunDir(runDir);
      const profile = (skill: string) => report.profiles.find((entry) => entry.skill === skill);
      expect(profile("greet-json")).toMatchObject({ n: 1, delta: 50, p: 1, class: "ineffective" });
      expect(profile("greet-txt")).toMatchObject({ n: 1, delta: 50 });
      expect(profile("greet-silent")).toMatchObject({ n: 0, class: null });
      expect(profile("greet-silent")?.unscorable).not.toBeNull();
      // The Dockerfile's `COPY skills` was commented out at import: the image has no skills.
      expect(
        await readFile(join(suite, "skills", "greet-json", "environment", "Dockerfile"), "utf8"),
      ).toMatch(/# skillsmith: .*COPY skills/);
    });
  });
});
