/**
 * The real Claude Code and Codex CLIs under `--sandbox unsafe`, driven by the scripted model
 * server (only the model's words are scripted): each CLI gets the workspace's host path (there is
 * no mount namespace to put it at `/workspace/<repo>`), writes the result file with its own shell
 * tool, and the run scores what the verifier finds. The shell also writes `$ANTHROPIC_API_KEY`
 * (Claude Code) or the provider's key variable (Codex) into the workspace, and the verifier
 * reports what it saw: the per-run dummy key, never the real one, and the real one appears in no
 * stored byte. A CLI binary that is missing or cannot start is an infrastructure failure: retried
 * up to the bound and never scored.
 *
 * The same holds in bubblewrap (Claude Code), where the key would otherwise sit in the CLI's
 * environment inside the sandbox.
 *
 * Before: both CLIs got `/workspace/<repo>` as their working directory under unsafe, failed with
 * ENOENT, every run was `agent_error` and scored 0; a CLI exiting 127 was scored as the agent's
 * failure; and the agent's environment held the real key.
 */
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeCodeHarness } from "../src/agents/claude-code.js";
import { findAgentCli } from "../src/agents/cli-locate.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { ScriptedServer } from "../src/model/scripted/server.js";
import { shellCommandServer, writeCliSuite } from "./support/cli-suites.js";
import { present, usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const claude = await findAgentCli("claude");
const codex = await findAgentCli("codex");
const bubblewrap = await usableBubblewrap();
/** Not in any redactable shape, so only the proxy (not redaction) can keep it out. */
const REAL_KEY = `real-model-key-${Date.now().toString(36)}-7f3a9c`;

let root: string;
const servers: ScriptedServer[] = [];

const writeSuite = (name: string, configurations: string) =>
  writeCliSuite(root, name, configurations);
const shellServer = (tool: "Bash" | "exec_command", command: string) =>
  shellCommandServer(servers, tool, command);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-unsafe-clis-"));
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await removeRunRoot(root);
});

function storedBytes(runDir: string): Buffer[] {
  return readdirSync(runDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)));
}

describe("the real CLIs under --sandbox unsafe", () => {
  it.skipIf(claude === undefined || codex === undefined)(
    "Claude Code and Codex work in the host workspace, see only a dummy key, and score a real result",
    async () => {
      const suite = await writeSuite(
        "unsafe-clis",
        "  - id: claude\n    agent: claude-code\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 120, maxTurns: 4 }\n  - id: codex\n    agent: codex\n    model: openai:gpt-5\n    limits: { timeoutSeconds: 120 }\n",
      );
      const claudeUrl = await shellServer(
        "Bash",
        'printf "good\\n" > result.txt; printf "%s" "$ANTHROPIC_API_KEY" > seen-key.txt',
      );
      const codexUrl = await shellServer(
        "exec_command",
        'printf "good\\n" > result.txt; printf "%s" "$SKILLSMITH_CODEX_API_KEY" > seen-key.txt',
      );
      const runDir = join(root, "unsafe-run");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: "unsafe",
        cacheDir: join(root, "cache"),
        modelEndpoint: (configuration) =>
          configuration.agent === "codex"
            ? { baseUrl: `${codexUrl}/v1`, apiKey: REAL_KEY }
            : { baseUrl: claudeUrl, apiKey: REAL_KEY },
      });
      expect(summary.failed).toEqual([]);
      expect(summary.executed).toBe(4);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      for (const result of results) {
        const label = `${result.config}/${result.arm}: ${JSON.stringify(result.checks)}`;
        expect(result.status, label).toBe("completed");
        expect(result.passRatio, label).toBe(1);
      }
      for (const bytes of storedBytes(runDir)) expect(bytes.includes(REAL_KEY)).toBe(false);
    },
    300_000,
  );
});

describe("the same shell, in bubblewrap", () => {
  it.skipIf(claude === undefined || bubblewrap === undefined)(
    "Claude Code's shell sees only the dummy key there too, and the real one is stored nowhere",
    async () => {
      const suite = await writeSuite(
        "bubblewrap-claude",
        "  - id: claude\n    agent: claude-code\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 120, maxTurns: 4 }\n",
      );
      const url = await shellServer(
        "Bash",
        'printf "good\\n" > result.txt; printf "%s" "$ANTHROPIC_API_KEY" > seen-key.txt',
      );
      const runDir = join(root, "bubblewrap-run");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: present(bubblewrap, "bubblewrap"),
        cacheDir: join(root, "cache"),
        modelEndpoint: { baseUrl: url, apiKey: REAL_KEY },
      });
      expect(summary.failed).toEqual([]);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      expect(results.map((result) => result.passRatio)).toEqual([1, 1]);
      for (const bytes of storedBytes(runDir)) expect(bytes.includes(REAL_KEY)).toBe(false);
    },
    300_000,
  );
});

describe("an agent CLI that cannot start", () => {
  it("a missing binary is retried as infrastructure and never scored", async () => {
    const suite = await writeSuite(
      "missing-cli",
      "  - id: claude\n    agent: claude-code\n    limits: { timeoutSeconds: 30 }\n",
    );
    const runDir = join(root, "missing-run");
    const summary = await runSuite({
      suite,
      runDir,
      sandbox: "unsafe",
      cacheDir: join(root, "cache"),
      maxAttempts: 2,
      harnessFor: () => new ClaudeCodeHarness({ binary: join(root, "no-such-claude") }),
    });
    expect(summary.executed).toBe(0);
    expect(summary.failed.map((failure) => failure.attempts)).toEqual([2, 2]);
    const store = ResultsStore.openReadOnly(runDir);
    expect(store.results()).toEqual([]);
    expect(store.attempts().map((attempt) => attempt.outcome)).toEqual([
      "infra_error",
      "infra_error",
      "infra_error",
      "infra_error",
    ]);
    store.close();
  });

  for (const sandbox of ["unsafe", "local"] as const) {
    it.skipIf(sandbox === "local" && bubblewrap === undefined)(
      `a binary whose interpreter is missing (exit 127 / exec failure) is infrastructure in ${sandbox}`,
      async () => {
        const suite = await writeSuite(
          `broken-cli-${sandbox}`,
          "  - id: claude\n    agent: claude-code\n    limits: { timeoutSeconds: 30 }\n",
        );
        const broken = join(root, `broken-claude-${sandbox}`);
        await writeFile(broken, "#!/nonexistent/interpreter\n");
        await chmod(broken, 0o755);
        const runDir = join(root, `broken-run-${sandbox}`);
        const summary = await runSuite({
          suite,
          runDir,
          sandbox: sandbox === "local" ? present(bubblewrap, "bubblewrap") : "unsafe",
          cacheDir: join(root, "cache"),
          maxAttempts: 2,
          harnessFor: () => new ClaudeCodeHarness({ binary: broken }),
        });
        expect(summary.executed).toBe(0);
        expect(summary.failed).toHaveLength(2);
        for (const failure of summary.failed) expect(failure.error).toContain("could not start");
        const store = ResultsStore.openReadOnly(runDir);
        expect(store.results()).toEqual([]);
        store.close();
      },
    );
  }
});
