/**
 * Fork, memory and CPU hogs in the code under test, stopped by the sandbox's limits and flagged
 * for what they hit — `process-limit`, `oom`, `timeout` — scored 0 and never `collection-error`,
 * with the limit named in the verifier's evidence. The verifier step runs in both real sandboxes;
 * a whole run in bubblewrap shows the flags in the stored result, and a fork bomb typed into the
 * builtin agent's shell flags the run from the agent side. Expectations are by hand: each
 * verifier writes one passing check once the hog returns (a refused fork or an OOM-killed child
 * lets it return), so a score of 0 comes from the limit's flag alone.
 *
 * Before: no process limit applied at all (1,500 forks succeeded), no memory limit applied by
 * default, and a run killed by a memory limit was flagged `collection-error`.
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { runSuiteVerifier } from "../src/bench/run/verifier.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { runVerifier } from "../src/env/verifier/run.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import {
  removeRunRoot,
  tinyRepository,
  writeAlphaSkill,
  writeRequirement,
} from "./support/suites.js";

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const MiB = 1024 * 1024;

/** The hogs, as the code under test: each would run far past its limit if nothing stopped it. */
const HOGS = {
  fork: "import os, time\nfor _ in range(2000):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\n",
  memory: "block = bytearray(2 * 1024 ** 3)\n",
  cpu: "while True:\n    pass\n",
} as const;
const EXPECTED_FLAG = { fork: "process-limit", memory: "oom", cpu: "timeout" } as const;
const EXPECTED_EVIDENCE = {
  fork: "process limit of 32",
  memory: "memory limit of 128 MiB",
  cpu: "wall-time limit of 3000 ms",
} as const;

/** Runs the workspace's hog, then (if it ever returns) writes one passing check. */
const CHECK_SCRIPT = `python3 "$SKILLSMITH_WORKSPACE/hog.py"
echo '<testsuite name="hog"><testcase classname="hog" name="returned"/></testsuite>' > junit.xml
`;

let root: string;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-limits-"));
});

afterAll(async () => {
  await server?.close();
  await removeRunRoot(root);
});

const backends: { name: string; sandbox: SandboxV1 | undefined; missing: string }[] = [
  { name: "bubblewrap", sandbox: bubblewrap, missing: "bubblewrap unusable" },
  { name: "container", sandbox: container, missing: "no Docker/Podman API or base image" },
];

for (const backend of backends) {
  describe(`verifier hogs in ${backend.name}${backend.sandbox === undefined ? ` (skipped: ${backend.missing})` : ""}`, () => {
    for (const hog of Object.keys(HOGS) as (keyof typeof HOGS)[]) {
      it.skipIf(backend.sandbox === undefined)(
        `a ${hog} hog is flagged ${EXPECTED_FLAG[hog]}, scored 0, with the limit as evidence`,
        async () => {
          const base = join(root, `${backend.name}-${hog}`);
          const workspace = join(base, "tiny");
          const folder = join(base, "verifier");
          await mkdir(workspace, { recursive: true });
          await mkdir(folder, { recursive: true });
          await writeFile(join(workspace, "hog.py"), HOGS[hog]);
          await writeFile(join(folder, "check.sh"), CHECK_SCRIPT);
          const verifier: SuiteVerifier = {
            command: "sh check.sh",
            folder,
            files: ["check.sh"],
            mountPath: "/verifier",
            cwd: "/verifier",
            junit: "junit.xml",
            // The CPU hog is stopped by this limit. The others must meet their own limit first,
            // and a sandbox plus Python's start took over 3 s at load 35 with two busy loops, so
            // the memory hog was stopped as a timeout before it could allocate.
            timeoutSeconds: hog === "cpu" ? 3 : 60,
          };
          const run = await runSuiteVerifier({
            sandbox: backend.sandbox as SandboxV1,
            verifier,
            workspace,
            workspaceMountPath: "/workspace/tiny",
            scratch: join(base, "scratch"),
            memoryBytes: 128 * MiB,
            maxProcesses: 32,
          });
          expect(run.flags).toContain(EXPECTED_FLAG[hog]);
          expect(run.flags).not.toContain("collection-error");
          expect(run.passRatio).toBe(0);
          expect(run.evidence.join("\n")).toContain(EXPECTED_EVIDENCE[hog]);
        },
      );
    }
  });
}

describe(`the environment's verifier runner${bubblewrap === undefined ? " (skipped: bubblewrap unusable)" : ""}`, () => {
  // The runner used by verifier validation, synthesis families and wiki gates flags the same way.
  it.skipIf(bubblewrap === undefined)(
    "flags a memory hog oom and a fork hog process-limit, scored 0, not collection-error",
    async () => {
      for (const hog of ["memory", "fork"] as const) {
        const workspace = join(root, `env-${hog}`, "tiny");
        await mkdir(workspace, { recursive: true });
        await writeFile(join(workspace, "hog.py"), HOGS[hog]);
        const result = await runVerifier({
          sandbox: bubblewrap as SandboxV1,
          workspace,
          workspaceMountPath: "/workspace/tiny",
          verifier: {
            command: CHECK_SCRIPT.replace("junit.xml", "/workspace/tiny/junit.xml"),
            resultsFile: "junit.xml",
            timeoutMs: 20_000,
            limits: { memoryBytes: 128 * MiB, maxProcesses: 32 },
          },
        });
        expect(result.flags).toEqual([EXPECTED_FLAG[hog]]);
        expect(result.passRatio).toBe(0);
      }
    },
  );
});

describe(`hogs through the runner${bubblewrap === undefined ? " (skipped: bubblewrap unusable)" : ""}`, () => {
  it.skipIf(bubblewrap === undefined)(
    "stores each hog's flag and evidence, scored 0, with limits from the suite and defaults in the manifest",
    async () => {
      const base = join(root, "runner");
      await mkdir(base);
      const { repo, commit } = await tinyRepository(base);
      const suite = join(base, "suite");
      const skill = await writeAlphaSkill(suite, {
        suiteYaml:
          "format: skillsmith-suite/1\nname: hogs\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 30 }\n",
        skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\nenvironment:\n  limits: { memoryMb: 128, processes: 32, commandTimeoutSeconds: 3 }\n`,
        skillMarkdown: "---\nname: alpha\ndescription: Hogs. Use for hogs.\n---\n\n# Alpha\n",
      });
      const lines: string[] = [];
      for (const hog of Object.keys(HOGS) as (keyof typeof HOGS)[]) {
        await writeRequirement(skill, hog, {
          requirementMarkdown: `## Requirement\n\nWrite hog.py.\n\n## File Operations\n\n- \`hog.py\`\n\n## Acceptance Criteria\n\n- it returns\n`,
          checkScript: CHECK_SCRIPT,
          verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
        });
        const patch = `diff --git a/hog.py b/hog.py\nnew file mode 100644\n--- /dev/null\n+++ b/hog.py\n@@ -0,0 +1,${HOGS[hog].trimEnd().split("\n").length} @@\n${HOGS[
          hog
        ]
          .trimEnd()
          .split("\n")
          .map((line) => `+${line}`)
          .join("\n")}\n`;
        for (const arm of ["without", "with"]) {
          lines.push(JSON.stringify({ skill: "alpha", requirement: hog, arm, patch }));
        }
      }
      const predictions = join(base, "predictions.jsonl");
      await writeFile(predictions, `${lines.join("\n")}\n`);
      const runDir = join(base, "run");
      const summary = await runSuite({
        suite,
        runDir,
        predictions,
        sandbox: bubblewrap as BubblewrapSandbox,
        cacheDir: join(base, "cache"),
        // The limits are under test, not the verifier check (its untouched runs would only add
        // time, and a weak-verifier note to every flag list).
        check: false,
      });
      expect(summary.failed).toEqual([]);
      expect(summary.executed).toBe(6);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      for (const result of results) {
        const hog = result.requirement as keyof typeof HOGS;
        expect(result.flags, `${hog}/${result.arm}`).toEqual([EXPECTED_FLAG[hog]]);
        expect(result.passRatio).toBe(0);
        expect(result.verifier?.evidence?.join("\n")).toContain(EXPECTED_EVIDENCE[hog]);
      }
      const manifest = JSON.parse(await readFile(join(runDir, "manifest.json"), "utf8")) as {
        sandboxLimits?: { defaults: Record<string, number>; enforcement?: { mechanism: string } };
      };
      expect(manifest.sandboxLimits?.defaults).toEqual({
        memoryBytes: 4 * 1024 * MiB,
        maxProcesses: 512,
        verifierTimeoutSeconds: 600,
      });
      expect(manifest.sandboxLimits?.enforcement?.mechanism).toBe(
        bubblewrap?.limitEnforcement().mechanism,
      );
    },
    // Six runs in bubblewrap after preparing the environment: past 120 s at load 50 with two
    // busy loops.
    300_000,
  );

  it.skipIf(bubblewrap === undefined)(
    "a fork bomb in the builtin agent's shell flags the run process-limit and scores it 0",
    async () => {
      const base = join(root, "agent-side");
      await mkdir(base);
      const { repo, commit } = await tinyRepository(base);
      const suite = join(base, "suite");
      const skill = await writeAlphaSkill(suite, {
        suiteYaml:
          "format: skillsmith-suite/1\nname: agent-hog\nconfigurations:\n  - id: builtin\n    agent: builtin\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 60, maxTurns: 4, processes: 16 }\n",
        skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n`,
        skillMarkdown: "---\nname: alpha\ndescription: Hogs. Use for hogs.\n---\n\n# Alpha\n",
      });
      // The verifier passes whatever the agent did: only the agent-side flag can zero the run.
      await writeRequirement(skill, "r1", {
        requirementMarkdown:
          "## Requirement\n\nFork a lot.\n\n## File Operations\n\n- `done.txt`\n\n## Acceptance Criteria\n\n- forks\n",
        checkScript:
          'echo \'<testsuite name="r"><testcase classname="r" name="always"/></testsuite>\' > junit.xml\n',
        verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
      });
      server = await startScriptedServer({
        script: {
          rules: [
            { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done." } },
            {
              match: { lastUserMessage: "Fork a lot" },
              reply: {
                toolCalls: [
                  {
                    name: "run_command",
                    input: {
                      command: `python3 -c '${HOGS.fork.replace("30", "5")}'; echo done > done.txt`,
                    },
                  },
                ],
              },
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const runDir = join(base, "run");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: bubblewrap as BubblewrapSandbox,
        cacheDir: join(base, "cache"),
        modelEndpoint: { baseUrl: `${server.url}/v1`, apiKey: "sk-test-agent-hog-0123456789" },
        check: false,
      });
      expect(summary.failed).toEqual([]);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      expect(results).toHaveLength(2);
      for (const result of results) {
        expect(result.flags).toEqual(["process-limit"]);
        expect(result.passRatio).toBe(0);
        const trajectory = result.trajectory as { limitHit?: { limit: string; detail: string } };
        expect(trajectory.limitHit?.limit).toBe("processes");
        expect(trajectory.limitHit?.detail).toContain("process limit of 16");
      }
    },
    120_000,
  );
});
