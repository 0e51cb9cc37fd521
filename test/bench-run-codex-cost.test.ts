/**
 * Codex reports tokens, never dollars. Before: every Codex run cost $0, so `--budget-usd` never
 * stopped a Codex suite. Now a run costs its tokens at the model's list price (gpt-5 is in
 * `model/prices.ts`; the config's `model.prices` wins), and the budget stops Codex runs too.
 *
 * The real Codex CLI runs under `--sandbox unsafe` (its own workspace-write sandbox), driven by
 * the scripted model server; every scripted reply carries fixed token counts, so the expected
 * cost is computed by hand from those counts and the number of model requests the server saw.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import type { Trajectory } from "../src/agents/types.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runCli } from "../src/cli/program.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { removeRunRoot, writeTinySuite } from "./support/suites.js";

const codex = await findAgentCli("codex");

/** Token counts of every scripted reply: 100k input (none cached), 10k output. */
const USAGE = { inputTokens: 100_000, cachedInputTokens: 0, outputTokens: 10_000 };
/** gpt-5 list price $1.25 / $10 per million: 0.1 · 1.25 + 0.01 · 10 = $0.225 per request. */
const GPT5_PER_REQUEST = 0.125 + 0.1;
/** The config override below, $2 / $20 per million: 0.1 · 2 + 0.01 · 20 = $0.40 per request. */
const OVERRIDE_PER_REQUEST = 0.2 + 0.2;

const CHECK = (k: number) => `{
  echo '<testsuite name="r">'
  if [ "$(cat "$SKILLSMITH_WORKSPACE/result-r${k}.txt" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi
  echo '</testsuite>'
} > junit.xml
`;

let root: string;
const servers: ScriptedServer[] = [];

async function codexServer(): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    script: {
      rules: [
        { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done.", usage: USAGE } },
        {
          match: { lastUserMessage: "result-r(\\d)\\.txt" },
          reply: {
            toolCalls: [
              {
                name: "exec_command",
                input: { cmd: "for k in 1 2; do echo good > result-r$k.txt; done" },
              },
            ],
            usage: USAGE,
          },
        },
      ],
      fallback: { text: "Nothing to do.", usage: USAGE },
    },
  });
  servers.push(server);
  return server;
}

async function suiteAt(name: string): Promise<string> {
  return writeTinySuite(await mkdtemp(join(root, `${name}-`)), {
    suiteYaml: `format: skillsmith-suite/1\nname: ${name}\nconfigurations:\n  - id: codex\n    agent: codex\n    model: openai:gpt-5\n    limits: { timeoutSeconds: 120 }\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
    checkScript: CHECK,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-codex-cost-"));
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await removeRunRoot(root);
});

describe("Codex runs cost their tokens", { timeout: 240_000 }, () => {
  it.skipIf(codex === undefined)(
    "a Codex run costs its tokens at gpt-5's list price, and the budget stops the suite after it",
    async () => {
      const server = await codexServer();
      const runDir = join(root, "library-run");
      const summary = await runSuite({
        suite: await suiteAt("codex-cost"),
        runDir,
        sandbox: "unsafe",
        concurrency: 1,
        // Below one run's cost: the first run is paid, no second one starts.
        budgetUsd: 0.3,
        cacheDir: join(root, "cache"),
        modelEndpoint: { baseUrl: `${server.url}/v1`, apiKey: "dummy" },
      });
      expect(summary.executed).toBe(1);
      expect(summary.stoppedByBudget).toBe(true);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      expect(results).toHaveLength(1);
      const [result] = results;
      const trajectory = result?.trajectory as Trajectory | undefined;
      expect(result?.status, trajectory?.error).toBe("completed");
      expect(result?.passRatio).toBe(1);
      // Codex sums the usage of a turn's requests; every request the server answered is paid.
      const requests = server.requests.length;
      expect(requests).toBeGreaterThanOrEqual(2);
      expect(result?.usage.inputTokens).toBe(requests * USAGE.inputTokens);
      expect(result?.usage.outputTokens).toBe(requests * USAGE.outputTokens);
      expect(result?.usage.costUsd).toBeCloseTo(requests * GPT5_PER_REQUEST, 10);
      expect(trajectory?.usage.costUsd).toBeCloseTo(requests * GPT5_PER_REQUEST, 10);
    },
  );

  it.skipIf(codex === undefined)(
    "bench run --budget-usd prices Codex with the config's model.prices override",
    async () => {
      const server = await codexServer();
      const cwd = await mkdtemp(join(root, "cli-"));
      await writeFile(
        join(cwd, "skillsmith.config.json"),
        JSON.stringify({ model: { prices: { "openai:gpt-5": { input: 2, output: 20 } } } }),
      );
      const runDir = join(cwd, "run");
      let stdout = "";
      let stderr = "";
      const code = await runCli(
        [
          "bench",
          "run",
          await suiteAt("codex-cost-cli"),
          "--out",
          runDir,
          "--sandbox",
          "unsafe",
          "--concurrency",
          "1",
          "--budget-usd",
          "0.5",
          "--json",
        ],
        {
          cwd,
          stdout: (text) => {
            stdout += text;
          },
          stderr: (text) => {
            stderr += text;
          },
          env: {
            ...process.env,
            OPENAI_BASE_URL: `${server.url}/v1`,
            OPENAI_API_KEY: "dummy",
            SKILLSMITH_CACHE_DIR: join(root, "cache"),
          },
        },
      );
      expect(code, stderr).toBeLessThanOrEqual(1);
      const output = JSON.parse(stdout) as {
        run: { executed: number; stoppedByBudget: boolean; costUsd: number };
      };
      expect(output.run.executed).toBe(1);
      expect(output.run.stoppedByBudget).toBe(true);
      expect(output.run.costUsd).toBeCloseTo(server.requests.length * OVERRIDE_PER_REQUEST, 10);
    },
  );
});
