/**
 * The real Claude Code and Codex CLIs in the container sandbox (Podman here, through the Docker
 * Engine API), driven by the scripted model server (only the model's words are scripted). Each
 * CLI runs inside a container of the base image (`localhost/skillsmith-base:bookworm`: Debian's
 * Node for Codex's launcher script, glibc for both native binaries), with only its own packages
 * mounted read-only from `node_modules`, the workspace, a per-run home, and the credential proxy
 * reached over the loopback bridge. Its shell writes the result file, the key it sees and the
 * host name it runs on; the verifier (in a container too) scores the result, checks that the key
 * was the per-run dummy and names a check after the agent's host name. So the stored results
 * show a real score, that the agent ran in a container (its host name is not this machine's),
 * and no stored byte holds the real key.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { type ContainerSandbox, connectDocker } from "../src/env/sandbox/container.js";
import type { ScriptedServer } from "../src/model/scripted/server.js";
import { KEY_CHECK_SCRIPT, shellCommandServer, writeCliSuite } from "./support/cli-suites.js";
import { availableContainerSandbox } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const claude = await findAgentCli("claude");
const codex = await findAgentCli("codex");
/** Podman's (or Docker's) API with skillsmith's base image; undefined when either is missing. */
const container: ContainerSandbox | undefined = await availableContainerSandbox();
/** Not in any redactable shape, so only the proxy (not redaction) can keep it out. */
const REAL_KEY = `real-model-key-${Date.now().toString(36)}-c0n7a1`;

/** The key checks, plus one check named after the host name the agent's shell saw. */
const CHECK_SCRIPT = KEY_CHECK_SCRIPT.replace(
  "  echo '</testsuite>'",
  `  where=$(tr -cd 'A-Za-z0-9.-' < "$SKILLSMITH_WORKSPACE/agent-host.txt" 2>/dev/null)
  echo "<testcase classname=\\"r\\" name=\\"agent-on-$where\\"/>"
  echo '</testsuite>'`,
);

let root: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-container-clis-"));
});

afterAll(async () => {
  for (const server of servers) await server.close();
  // The environment image built for this test's base (its commit is new on every run).
  const engine = await connectDocker({ timeoutMs: 2_000 }).catch(() => undefined);
  const bases = await readdir(join(root, "cache", "bases")).catch(() => [] as string[]);
  for (const base of bases) {
    const meta = await readFile(join(root, "cache", "bases", base, "meta.json"), "utf8").catch(
      () => undefined,
    );
    const image = meta === undefined ? undefined : JSON.parse(meta).environment?.image;
    if (engine !== undefined && typeof image === "string")
      await engine.docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
  }
  await removeRunRoot(root);
});

function storedBytes(runDir: string): Buffer[] {
  return readdirSync(runDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)));
}

describe("the real CLIs in the container sandbox", () => {
  it.skipIf(container === undefined || claude === undefined || codex === undefined)(
    "Claude Code and Codex run inside containers, see only a dummy key, and score a real result (needs a Docker/Podman API socket, e.g. `podman system service`, with localhost/skillsmith-base)",
    async () => {
      const suite = await writeCliSuite(
        root,
        "container-clis",
        "  - id: claude\n    agent: claude-code\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 120, maxTurns: 4 }\n  - id: codex\n    agent: codex\n    model: openai:gpt-5\n    limits: { timeoutSeconds: 120 }\n",
        CHECK_SCRIPT,
      );
      const shell = (variable: string) =>
        `printf "good\\n" > result.txt; printf "%s" "$${variable}" > seen-key.txt; cat /proc/sys/kernel/hostname > agent-host.txt`;
      const claudeUrl = await shellCommandServer(servers, "Bash", shell("ANTHROPIC_API_KEY"));
      const codexUrl = await shellCommandServer(
        servers,
        "exec_command",
        shell("SKILLSMITH_CODEX_API_KEY"),
      );
      const runDir = join(root, "run");
      const summary = await runSuite({
        suite,
        runDir,
        sandbox: "container",
        cacheDir: join(root, "cache"),
        // Two runs at a time: each CLI spends most of its time starting up.
        concurrency: 2,
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
      expect(results).toHaveLength(4);
      for (const result of results) {
        const label = `${result.config}/${result.arm}: ${JSON.stringify(result.checks)}`;
        expect(result.status, label).toBe("completed");
        // good, dummy-key and the host-name check: 3 of 3.
        expect(result.passRatio, label).toBe(1);
        const where = result.checks.find((check) => check.name.startsWith("r::agent-on-"));
        const agentHost = where?.name.slice("r::agent-on-".length);
        // The shell wrote a host name, and it is not this machine's: a container's own.
        expect(agentHost, label).toMatch(/^[A-Za-z0-9.-]+$/);
        expect(agentHost, label).not.toBe(hostname());
      }
      for (const bytes of storedBytes(runDir)) expect(bytes.includes(REAL_KEY)).toBe(false);
    },
    // Both real CLIs, each arm in its own container: past 300 s at load 35 with two busy loops.
    600_000,
  );
});
