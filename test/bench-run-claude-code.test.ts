/**
 * A suite run end to end with the real Claude Code CLI, driven by the scripted model server (only
 * the model's words are scripted): materialised workspaces in bubblewrap at the fixed mount path,
 * the skill installed in the assisted arm only, real verifiers, results in the store.
 *
 * The scripted model writes `good` into result-r1.txt and `bad` into result-r2.txt whatever the
 * arm, so by hand: r1 passes 2 of 2 checks in both arms, r2 1 of 2 in both; every d_i = 0,
 * Δ = 0, p = 1 → Ineffective, and since the model never calls the skill, activation is 0.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import { reportRunDir } from "../src/bench/analysis/load.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { TINY_MOUNT, writeTinySuite } from "./support/suites.js";

const API_KEY = "sk-test-bench-run-9c1e2f3a4b5d6e7f8a9b";
const claude = await findAgentCli("claude");

const bubblewrap = await usableBubblewrap();

let root: string;
let server: ScriptedServer | undefined;

function makeSuite(): Promise<string> {
  return writeTinySuite(root, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: tiny-claude\nconfigurations:\n  - id: claude-haiku\n    agent: claude-code\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 120, maxTurns: 6 }\n",
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files containing the word good. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite exactly `good` followed by a newline.\n",
    checkScript: (k) => `file="$SKILLSMITH_WORKSPACE/result-r${k}.txt"
{
  echo '<testsuite name="r${k}">'
  if [ -f "$file" ]; then echo '<testcase classname="r" name="exists"/>'; else echo '<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi
  if [ "$(cat "$file" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi
  echo '</testsuite>'
} > junit.xml
`,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-claude-"));
});

afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe("bench run with the real Claude Code CLI (scripted model)", () => {
  it.skipIf(claude === undefined || bubblewrap === undefined)(
    "scores both arms of every requirement from what the CLI wrote, with the skill shown only when installed",
    async () => {
      const suite = await makeSuite();
      server = await startScriptedServer({
        script: {
          rules: [
            // After the Write's tool result: finish.
            { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done." } },
            {
              match: { lastUserMessage: "result-r1\\.txt" },
              reply: {
                toolCalls: [
                  {
                    name: "Write",
                    input: { file_path: `${TINY_MOUNT}/result-r1.txt`, content: "good\n" },
                  },
                ],
              },
            },
            {
              match: { lastUserMessage: "result-r2\\.txt" },
              reply: {
                toolCalls: [
                  {
                    name: "Write",
                    input: { file_path: `${TINY_MOUNT}/result-r2.txt`, content: "bad\n" },
                  },
                ],
              },
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const runDir = join(root, "run");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: bubblewrap as BubblewrapSandbox,
        cacheDir: join(root, "cache"),
        modelEndpoint: { baseUrl: server.url, apiKey: API_KEY },
      });
      expect(summary.failed).toEqual([]);
      expect(summary.executed).toBe(4);

      const store = ResultsStore.openReadOnly(runDir);
      try {
        const results = store.results();
        const byKey = new Map(
          results.map((result) => [`${result.requirement}/${result.arm}`, result]),
        );
        for (const arm of ["without", "with"] as const) {
          expect(byKey.get(`r1/${arm}`)?.passRatio).toBe(1);
          expect(byKey.get(`r2/${arm}`)?.passRatio).toBe(0.5);
          expect(byKey.get(`r1/${arm}`)?.requiredFiles).toEqual({ "result-r1.txt": true });
        }
        for (const result of results) {
          const trajectory = result.trajectory as { harness: string; skillsShown: string[] };
          expect(trajectory.harness).toBe("claude-code");
          // The skill under test was shown to the model only where it was installed.
          expect(trajectory.skillsShown.includes("alpha")).toBe(result.arm === "with");
          expect(result.skillActivated).toBe(false);
          expect(result.usage.inputTokens).toBeGreaterThan(0);
        }
      } finally {
        store.close();
      }
      const stored = await readFile(join(runDir, "results.sqlite"));
      expect(stored.includes(Buffer.from(API_KEY))).toBe(false);

      const report = await reportRunDir(runDir);
      const profile = report.profiles[0];
      expect(profile?.requirements.map((outcome) => outcome.delta)).toEqual([0, 0]);
      expect(profile?.p).toBe(1);
      expect(profile?.class).toBe("ineffective");
      expect(profile?.activation_rate).toBe(0);
      expect(profile?.notes.join("\n")).toMatch(/never activated the skill/);
    },
  );
});
