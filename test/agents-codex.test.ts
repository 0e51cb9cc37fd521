import { randomUUID } from "node:crypto";
import { readdir, readFile, rm, rmdir } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CodexHarness } from "../src/agents/codex.js";
import type { AgentRunRequest } from "../src/agents/types.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  API_KEY,
  agentTimeoutMs,
  canScanProcesses,
  changedFiles,
  codexBinary,
  createFixture,
  type Fixture,
  firstToolResultText,
  memoryProbeCommand,
  oneToolCallScript,
  SKILL_DESCRIPTION,
  SKILL_NAME,
  secondSkill,
  survivingProcesses,
} from "./support/agents.js";
import { capsProcessTrees, recordingLimits, usableBubblewrap } from "./support/sandboxes.js";

const TASK = "Fix the greeting in greeting.txt.";
const SED = "sed -i 's/hullo/Hello/' greeting.txt";

let fixture: Fixture;
let server: ScriptedServer | undefined;
let stateDirectory: string;

beforeEach(async () => {
  fixture = await createFixture();
  // Codex refuses helper links under the system temporary folder, so its homes live under the
  // user's cache; the tests use a folder of their own there to check that runs clean up.
  stateDirectory = join(
    process.env.HOME ?? tmpdir(),
    ".cache",
    "skillsmith-test",
    `codex-${Date.now()}-${Math.random().toString(16).slice(2)}`,
  );
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await fixture.cleanup();
  await rm(stateDirectory, { recursive: true, force: true });
  // The shared parent goes too once no other run uses it.
  await rmdir(dirname(stateDirectory)).catch(() => undefined);
});

function script(withSkill: boolean): Script {
  const sed = { toolCalls: [{ name: "exec_command", input: { cmd: SED } }] };
  return {
    rules: [
      {
        match: { lastUserMessage: "Fix the greeting" },
        times: 1,
        reply: withSkill
          ? {
              toolCalls: [
                {
                  name: "exec_command",
                  input: { cmd: `cat .agents/skills/${SKILL_NAME}/SKILL.md` },
                },
              ],
            }
          : sed,
      },
      { match: { toolResult: "capital H" }, times: 1, reply: sed },
    ],
    fallback: { text: "Fixed the greeting.", usage: { inputTokens: 120, outputTokens: 4 } },
  };
}

/** Skill names in the `<skills_instructions>` list of a recorded request body (sorted). */
function listedInRequest(body: unknown): string[] {
  const text = JSON.stringify(body);
  const block = text.slice(
    text.indexOf("### Available skills"),
    text.indexOf("</skills_instructions>"),
  );
  return [...block.matchAll(/\\n- ([a-z0-9-]+): /g)].map((match) => match[1] ?? "").sort();
}

function request(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  return {
    task: TASK,
    workspace: fixture.workspace,
    model: {
      spec: "openai:gpt-5-codex",
      ...(server === undefined ? {} : { baseUrl: `${server.url}/v1` }),
      apiKey: API_KEY,
    },
    limits: { timeoutMs: agentTimeoutMs },
    sandbox: new UnsafeSandbox(),
    ...overrides,
  };
}

const hasCodex = codexBinary !== undefined;

const bubblewrap = await usableBubblewrap();
const cgroupLimits = capsProcessTrees(bubblewrap);

// Real CLIs take a few seconds each on an idle machine; the generous limit absorbs a loaded CI host.
describe("codex harness (real Codex CLI, scripted model)", { timeout: 90_000 }, () => {
  it.skipIf(!hasCodex)(
    "runs the with-skill arm in Codex's own sandbox: skill listed, SKILL.md read, file edited",
    async () => {
      server = await startScriptedServer({ script: script(true) });
      const trajectory = await new CodexHarness({ stateDirectory }).run(
        request({ skillPath: fixture.skillPath }),
      );

      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe(
        "Hello, world\n",
      );
      expect(server.requests.every((recorded) => recorded.api === "openai-responses")).toBe(true);
      const bodies = server.requests.map((recorded) => JSON.stringify(recorded.body));
      expect(bodies[0]).toContain(`${SKILL_NAME}: ${SKILL_DESCRIPTION}`);
      // Codex was sandboxed by itself: the prompt says so.
      expect(bodies[0]).toContain("workspace-write");
      expect(server.requests[0]?.model).toBe("gpt-5-codex");

      expect(trajectory.skillActivated).toBe(true);
      // Read from Codex's stored session; it must equal what the request actually listed.
      expect(trajectory.skillsShownSource).toBe("agent-log");
      expect(trajectory.skillsShown).toContain(SKILL_NAME);
      expect([...trajectory.skillsShown].sort()).toEqual(listedInRequest(server.requests[0]?.body));
      const commands = trajectory.events.flatMap((event) =>
        event.type === "tool_call" ? [JSON.stringify(event.input)] : [],
      );
      expect(commands).toHaveLength(2);
      expect(commands[0]).toContain(`cat .agents/skills/${SKILL_NAME}/SKILL.md`);
      expect(commands[1]).toContain("s/hullo/Hello/");
      expect(
        trajectory.events.filter((event) => event.type === "tool_result" && !event.isError),
      ).toHaveLength(2);
      expect(trajectory.events).toContainEqual({
        type: "assistant_text",
        text: "Fixed the greeting.",
      });
      // Three model calls: the fallback's figures are ours; the other two the server estimates.
      expect(trajectory.usage.inputTokens).toBeGreaterThan(120);
      expect(trajectory.usage.outputTokens).toBeGreaterThanOrEqual(4);
      expect(JSON.stringify(trajectory)).not.toContain(API_KEY);
      expect(await changedFiles(fixture.workspace)).toBe(" M greeting.txt\n");
      // The per-run HOME / CODEX_HOME is gone.
      expect(await readdir(stateDirectory)).toEqual([]);
    },
  );

  it.skipIf(!hasCodex)(
    "runs the without-skill arm with Codex's sandbox bypassed: skill absent, not activated",
    async () => {
      server = await startScriptedServer({ script: script(false) });
      const trajectory = await new CodexHarness({ stateDirectory, codexSandbox: "bypass" }).run(
        request(),
      );

      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe(
        "Hello, world\n",
      );
      for (const recorded of server.requests) {
        expect(JSON.stringify(recorded.body)).not.toContain(SKILL_NAME);
      }
      expect(trajectory.skillActivated).toBe(false);
      expect(trajectory.skillsShownSource).toBe("agent-log");
      expect(trajectory.skillsShown).not.toContain(SKILL_NAME);
      // Codex still lists the skills it ships with (skill-creator and others).
      expect(trajectory.skillsShown.length).toBeGreaterThan(0);
      expect([...trajectory.skillsShown].sort()).toEqual(listedInRequest(server.requests[0]?.body));
    },
  );

  it.skipIf(!hasCodex)(
    "installs every folder of skillPaths: Codex lists each, and all are removed afterwards",
    async () => {
      const punctuation = await secondSkill(
        fixture,
        "punctuation",
        "End greetings with an exclamation mark.\n",
      );
      server = await startScriptedServer({
        script: oneToolCallScript(
          { name: "exec_command", input: { cmd: "cat .agents/skills/punctuation/SKILL.md" } },
          "Done.",
        ),
      });
      const trajectory = await new CodexHarness({ stateDirectory, codexSandbox: "bypass" }).run(
        request({ skillPaths: [fixture.skillPath, punctuation] }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      const listed = listedInRequest(server.requests[0]?.body);
      expect(listed).toEqual(expect.arrayContaining([SKILL_NAME, "punctuation"]));
      expect(trajectory.skillsShown).toEqual(expect.arrayContaining([SKILL_NAME, "punctuation"]));
      expect(trajectory.skills).toEqual([
        { name: SKILL_NAME, installedAt: `.agents/skills/${SKILL_NAME}` },
        { name: "punctuation", installedAt: ".agents/skills/punctuation" },
      ]);
      expect(trajectory.skill?.name).toBe(SKILL_NAME);
      // Reading the second folder's SKILL.md counts as activation.
      expect(trajectory.skillActivated).toBe(true);
      expect(await changedFiles(fixture.workspace)).toBe("");
    },
  );

  it.skipIf(!hasCodex || !cgroupLimits)(
    "passes the memory and CPU caps to the sandbox, which holds the CLI's commands to them",
    async () => {
      // 1 GiB cannot fit under 384 MiB with the CLI beside it; 8 MiB fits.
      const command = memoryProbeCommand(1024);
      server = await startScriptedServer({
        script: oneToolCallScript({ name: "exec_command", input: { cmd: command } }, "Measured."),
      });
      const recorded = recordingLimits(bubblewrap as BubblewrapSandbox);
      const trajectory = await new CodexHarness({ stateDirectory }).run(
        request({
          sandbox: recorded.sandbox,
          limits: { timeoutMs: agentTimeoutMs, memoryBytes: 384 * 1024 * 1024, cpus: 1 },
        }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(recorded.limits).toEqual([
        { timeoutMs: agentTimeoutMs, memoryBytes: 384 * 1024 * 1024, cpus: 1 },
      ]);
      const text = firstToolResultText(trajectory);
      expect(text).toMatch(/small=0\b/);
      expect(text).toMatch(/big=\d+/);
      expect(text).not.toMatch(/big=0\b/);
    },
  );

  it.skipIf(!hasCodex || !canScanProcesses)(
    "kills the whole process tree (node wrapper and native binary) on timeout",
    async () => {
      server = await startScriptedServer({
        script: { fallback: { text: "too late" }, faults: { latencyMs: 30_000 } },
      });
      const marker = `skillsmith-test-${randomUUID()}`;
      const trajectory = await new CodexHarness({ stateDirectory }).run(
        request({ limits: { timeoutMs: 2_000 }, env: { SKILLSMITH_TEST_MARKER: marker } }),
      );
      expect(trajectory.status).toBe("timeout");
      expect(await survivingProcesses(marker)).toEqual([]);
      expect(await readdir(stateDirectory)).toEqual([]);
    },
  );

  it.skipIf(!hasCodex)("reports an unreachable model endpoint as infra_error", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const trajectory = await new CodexHarness({
      stateDirectory,
      maxRetries: 0,
      endpointFailureLimit: 1,
    }).run(
      request({
        model: { spec: "gpt-5-codex", baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY },
        limits: { timeoutMs: 30_000 },
      }),
    );
    expect(trajectory.status, trajectory.error).toBe("infra_error");
    expect(JSON.stringify(trajectory)).not.toContain(API_KEY);
  });

  it.skipIf(!hasCodex)(
    "removes its home and the installed skill when the model bridge cannot start",
    async () => {
      const before = (await readdir(fixture.workspace)).sort();
      // An ftp URL: the credential proxy refuses it (a user's mistake, so an InputError) after the
      // home exists and the skill is in.
      await expect(
        new CodexHarness({ stateDirectory }).run(
          request({
            skillPath: fixture.skillPath,
            model: { spec: "gpt-5-codex", baseUrl: "ftp://127.0.0.1/v1", apiKey: API_KEY },
          }),
        ),
      ).rejects.toMatchObject({ code: "env.model-base-url-invalid", family: "input" });
      // The state directory was created for the run; the run's home inside it is gone.
      expect(await readdir(stateDirectory)).toEqual([]);
      expect((await readdir(fixture.workspace)).sort()).toEqual(before);
    },
  );
});
