import { randomUUID } from "node:crypto";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClaudeCodeHarness } from "../src/agents/claude-code.js";
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
  claudeBinary,
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

let fixture: Fixture;
let server: ScriptedServer | undefined;

beforeEach(async () => {
  fixture = await createFixture();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await fixture.cleanup();
});

/** Read the file, then replace "hullo" by "Hello"; `first` is the reply to the task itself. */
function editScript(workspace: string, withSkill: boolean): Script {
  const file = join(workspace, "greeting.txt");
  const read = { toolCalls: [{ name: "Read", input: { file_path: file } }] };
  return {
    rules: [
      {
        match: { lastUserMessage: "Fix the greeting" },
        times: 1,
        reply: withSkill
          ? {
              text: "Let me check the skill.",
              toolCalls: [{ name: "Skill", input: { skill: SKILL_NAME } }],
            }
          : read,
      },
      { match: { lastUserMessage: "capital H" }, times: 1, reply: read },
      {
        match: { toolResult: "hullo, world" },
        times: 1,
        reply: {
          toolCalls: [
            { name: "Edit", input: { file_path: file, old_string: "hullo", new_string: "Hello" } },
          ],
        },
      },
    ],
    fallback: { text: "Fixed the greeting.", usage: { inputTokens: 100, outputTokens: 5 } },
  };
}

function request(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  return {
    task: TASK,
    workspace: fixture.workspace,
    model: {
      spec: "anthropic:claude-haiku-4-5",
      ...(server === undefined ? {} : { baseUrl: server.url }),
      apiKey: API_KEY,
    },
    limits: { timeoutMs: agentTimeoutMs, maxTurns: 8, budgetUsd: 5 },
    sandbox: new UnsafeSandbox(),
    ...overrides,
  };
}

const hasClaude = claudeBinary !== undefined;

const bubblewrap = await usableBubblewrap();
const cgroupLimits = capsProcessTrees(bubblewrap);

// Real CLIs take 2–3 s each on an idle machine; the generous limit absorbs a loaded CI host.
describe("claude-code harness (real Claude Code CLI, scripted model)", { timeout: 90_000 }, () => {
  it.skipIf(!hasClaude)(
    "runs the with-skill arm: the skill is listed, activated through Skill, and the file is edited",
    async () => {
      server = await startScriptedServer({ script: editScript(fixture.workspace, true) });
      const trajectory = await new ClaudeCodeHarness().run(
        request({ skillPath: fixture.skillPath, taskId: "greeting" }),
      );

      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe(
        "Hello, world\n",
      );
      const bodies = server.requests.map((recorded) => JSON.stringify(recorded.body));
      // The CLI loaded the copy installed at .claude/skills/<name>/ ...
      expect(
        bodies.some((body) =>
          body.includes(
            `Base directory for this skill: ${fixture.workspace}/.claude/skills/${SKILL_NAME}`,
          ),
        ),
      ).toBe(true);
      // ... which is gone after the run: the workspace holds only the agent's change.
      expect(await changedFiles(fixture.workspace)).toBe(" M greeting.txt\n");
      expect(bodies.some((body) => body.includes(`${SKILL_NAME}: ${SKILL_DESCRIPTION}`))).toBe(
        true,
      );
      expect(server.requests.some((recorded) => recorded.toolNames.includes("Skill"))).toBe(true);
      // The skill body reached the model after the Skill call.
      expect(bodies.some((body) => body.includes("Always spell the greeting as Hello"))).toBe(true);

      expect(trajectory.skillsShownSource).toBe("agent-log");
      expect(trajectory.skillsShown).toContain(SKILL_NAME);
      expect(trajectory.skill).toEqual({
        name: SKILL_NAME,
        installedAt: `.claude/skills/${SKILL_NAME}`,
      });
      expect(trajectory.skillActivated).toBe(true);
      const calls = trajectory.events.flatMap((event) =>
        event.type === "tool_call" ? [event.name] : [],
      );
      expect(calls).toEqual(["Skill", "Read", "Edit"]);
      expect(trajectory.events).toContainEqual({
        type: "assistant_text",
        text: "Let me check the skill.",
      });
      const editCall = trajectory.events.find(
        (event) => event.type === "tool_call" && event.name === "Edit",
      );
      const editResult = trajectory.events.find(
        (event) =>
          event.type === "tool_result" &&
          editCall?.type === "tool_call" &&
          event.id === editCall.id,
      );
      expect(editResult).toMatchObject({ isError: false });
      expect(trajectory.usage.inputTokens).toBeGreaterThan(0);
      expect(trajectory.usage.costUsd).toBeGreaterThan(0);
      expect(trajectory.taskId).toBe("greeting");
      expect(trajectory.arm).toBe("with-skill");
      expect(trajectory.exitCode).toBe(0);

      // The key reached the endpoint (as a header) but not the stored trajectory.
      expect(server.requests[0]?.headers["x-api-key"]).toBe("[REDACTED]");
      expect(JSON.stringify(trajectory)).not.toContain(API_KEY);
      expect(trajectory.rawLog).toContain('"type":"result"');
    },
  );

  it.skipIf(!hasClaude)(
    "runs the without-skill arm: the skill is absent from every request and not activated",
    async () => {
      server = await startScriptedServer({ script: editScript(fixture.workspace, false) });
      const trajectory = await new ClaudeCodeHarness().run(request());

      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe(
        "Hello, world\n",
      );
      expect(server.requests.length).toBeGreaterThan(0);
      for (const recorded of server.requests) {
        expect(JSON.stringify(recorded.body)).not.toContain(SKILL_NAME);
      }
      expect(trajectory.skillsShown).not.toContain(SKILL_NAME);
      expect(trajectory.skill).toBeUndefined();
      expect(trajectory.skillActivated).toBe(false);
      expect(trajectory.arm).toBe("without-skill");
    },
  );

  it.skipIf(!hasClaude || bubblewrap === undefined)(
    "runs inside the bubblewrap sandbox, reaching the model through the loopback bridge only",
    async () => {
      server = await startScriptedServer({ script: editScript(fixture.workspace, true) });
      const trajectory = await new ClaudeCodeHarness().run(
        request({ skillPath: fixture.skillPath, sandbox: bubblewrap as BubblewrapSandbox }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe(
        "Hello, world\n",
      );
      expect(trajectory.skillActivated).toBe(true);
      expect(JSON.stringify(trajectory)).not.toContain(API_KEY);
    },
  );

  it.skipIf(!hasClaude)(
    "installs every folder of skillPaths: the CLI lists each, and all are removed afterwards",
    async () => {
      const punctuation = await secondSkill(
        fixture,
        "punctuation",
        "End greetings with an exclamation mark.\n",
      );
      server = await startScriptedServer({
        script: oneToolCallScript({ name: "Skill", input: { skill: "punctuation" } }, "Done."),
      });
      const trajectory = await new ClaudeCodeHarness().run(
        request({ skillPaths: [fixture.skillPath, punctuation] }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      const bodies = server.requests.map((recorded) => JSON.stringify(recorded.body));
      expect(bodies.some((body) => body.includes(`${SKILL_NAME}: ${SKILL_DESCRIPTION}`))).toBe(
        true,
      );
      expect(bodies.some((body) => body.includes("exclamation mark"))).toBe(true);
      expect(trajectory.skillsShownSource).toBe("agent-log");
      expect(trajectory.skillsShown).toEqual(expect.arrayContaining([SKILL_NAME, "punctuation"]));
      expect(trajectory.skills).toEqual([
        { name: SKILL_NAME, installedAt: `.claude/skills/${SKILL_NAME}` },
        { name: "punctuation", installedAt: ".claude/skills/punctuation" },
      ]);
      expect(trajectory.skill?.name).toBe(SKILL_NAME);
      expect(trajectory.skillActivated).toBe(true);
      expect(await changedFiles(fixture.workspace)).toBe("");
    },
  );

  it.skipIf(!hasClaude || !cgroupLimits)(
    "passes the memory and CPU caps to the sandbox, which holds the CLI's commands to them",
    async () => {
      // The cap covers the CLI and everything it starts. 2 GiB cannot fit under 768 MiB (the
      // largest process, python, is the one killed); 8 MiB fits beside the CLI.
      const command = memoryProbeCommand(2048);
      server = await startScriptedServer({
        script: {
          rules: [
            { match: { toolResult: "small=" }, reply: { text: "Measured." } },
            {
              match: { lastUserMessage: "Fix the greeting" },
              times: 1,
              reply: { toolCalls: [{ name: "Bash", input: { command } }] },
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const recorded = recordingLimits(bubblewrap as BubblewrapSandbox);
      const trajectory = await new ClaudeCodeHarness().run(
        request({
          sandbox: recorded.sandbox,
          limits: {
            timeoutMs: agentTimeoutMs,
            maxTurns: 4,
            memoryBytes: 768 * 1024 * 1024,
            cpus: 1.5,
          },
        }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(recorded.limits).toEqual([
        { timeoutMs: agentTimeoutMs, memoryBytes: 768 * 1024 * 1024, cpus: 1.5 },
      ]);
      const text = firstToolResultText(trajectory);
      expect(text).toMatch(/small=0\b/);
      expect(text).toMatch(/big=\d+/);
      expect(text).not.toMatch(/big=0\b/);
    },
  );

  it.skipIf(!hasClaude)("stops at --max-turns with agent_error", async () => {
    // A model that reads the same file forever.
    server = await startScriptedServer({
      script: {
        fallback: {
          toolCalls: [
            { name: "Read", input: { file_path: join(fixture.workspace, "greeting.txt") } },
          ],
        },
      },
    });
    const trajectory = await new ClaudeCodeHarness().run(
      request({ limits: { timeoutMs: agentTimeoutMs, maxTurns: 2 } }),
    );
    expect(trajectory.status).toBe("agent_error");
    expect(trajectory.error).toMatch(/^error_max_turns/);
    expect(trajectory.events.filter((event) => event.type === "tool_call")).toHaveLength(2);
  });

  it.skipIf(!hasClaude || !canScanProcesses)(
    "kills the whole process tree on timeout and reports status timeout",
    async () => {
      // Every model call takes 300 s, far beyond the 2 s limit.
      server = await startScriptedServer({
        script: { fallback: { text: "too late" }, faults: { latencyMs: 300_000 } },
      });
      const marker = `skillsmith-test-${randomUUID()}`;
      const started = Date.now();
      const trajectory = await new ClaudeCodeHarness().run(
        request({ limits: { timeoutMs: 2_000 }, env: { SKILLSMITH_TEST_MARKER: marker } }),
      );
      expect(trajectory.status).toBe("timeout");
      expect(trajectory.error).toContain("2000 ms");
      // The CLI's own start-up on a loaded machine fits well inside; the model's 300 s does not.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(await survivingProcesses(marker)).toEqual([]);
    },
  );

  it.skipIf(!hasClaude)("reports an unreachable model endpoint as infra_error", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const trajectory = await new ClaudeCodeHarness().run(
      request({
        model: { spec: "claude-haiku-4-5", baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY },
        env: { CLAUDE_CODE_MAX_RETRIES: "0" },
        limits: { timeoutMs: 30_000 },
      }),
    );
    expect(trajectory.status, trajectory.error).toBe("infra_error");
    expect(JSON.stringify(trajectory)).not.toContain(API_KEY);
  });

  it.skipIf(!hasClaude)(
    "reports an endpoint answering 500 after the CLI's retries as infra_error",
    async () => {
      server = await startScriptedServer({
        script: { fallback: { text: "never" }, faults: { rate500: 1, seed: 1 } },
      });
      const trajectory = await new ClaudeCodeHarness().run(
        request({ env: { CLAUDE_CODE_MAX_RETRIES: "1" } }),
      );
      expect(trajectory.status, trajectory.error).toBe("infra_error");
      expect(trajectory.error).toContain("API Error: 500");
      // The first call and the one retry we allowed.
      expect(server.requests.map((recorded) => recorded.fault)).toEqual(["500", "500"]);
    },
  );

  it.skipIf(!hasClaude)(
    "passes a task starting with a dash as the prompt, not a flag",
    async () => {
      server = await startScriptedServer({
        script: {
          rules: [{ match: { lastUserMessage: "--version, please" }, reply: { text: "matched" } }],
          fallback: { text: "not matched" },
        },
      });
      const trajectory = await new ClaudeCodeHarness().run(request({ task: "--version, please" }));
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(trajectory.events).toEqual([{ type: "assistant_text", text: "matched" }]);
    },
  );

  it("turns a malformed stream-json line into agent_error quoting the line", async () => {
    // A stand-in binary: the point is our parsing of what a CLI prints, not Claude Code itself.
    const binary = join(fixture.root, "fake-claude");
    await writeFile(
      binary,
      `#!/bin/sh\necho '{"type":"system","subtype":"init","skills":["a"]}'\necho 'this is {not json'\nexit 0\n`,
    );
    await chmod(binary, 0o755);
    const trajectory = await new ClaudeCodeHarness({ binary }).run(request());
    expect(trajectory.status).toBe("agent_error");
    expect(trajectory.error).toBe('malformed stream-json at line 2: "this is {not json"');
    expect(trajectory.events.at(-1)).toEqual({ type: "error", message: trajectory.error });
    expect(trajectory.skillsShown).toEqual(["a"]);
  });

  it("rejects a workspace that does not exist, naming it", async () => {
    const missing = join(fixture.root, "missing");
    await expect(
      new ClaudeCodeHarness({ binary: "/bin/true" }).run(request({ workspace: missing })),
    ).rejects.toThrow(missing);
    await expect(stat(missing)).rejects.toThrow();
  });
});
