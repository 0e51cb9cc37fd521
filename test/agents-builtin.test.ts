import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BuiltinHarness } from "../src/agents/builtin.js";
import { parseTrajectory } from "../src/agents/trajectory.js";
import type { AgentRunRequest } from "../src/agents/types.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  API_KEY,
  changedFiles,
  createFixture,
  type Fixture,
  firstToolResultText,
  memoryProbeCommand,
  oneToolCallScript,
  SKILL_DESCRIPTION,
  SKILL_NAME,
  secondSkill,
} from "./support/agents.js";
import { recordingLimits, usableBubblewrap } from "./support/sandboxes.js";

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

function script(withSkill: boolean): Script {
  const read = { toolCalls: [{ name: "read_file", input: { path: "greeting.txt" } }] };
  return {
    rules: [
      {
        match: { lastUserMessage: "Fix the greeting" },
        times: 1,
        reply: withSkill
          ? { toolCalls: [{ name: "load_skill", input: { name: SKILL_NAME } }] }
          : read,
      },
      { match: { toolResult: "capital H" }, times: 1, reply: read },
      {
        match: { toolResult: "hullo, world" },
        times: 1,
        reply: {
          text: "Fixing the spelling.",
          toolCalls: [
            {
              name: "edit_file",
              input: { path: "greeting.txt", old_string: "hullo", new_string: "Hello" },
            },
          ],
        },
      },
      {
        match: { toolResult: "replaced 1" },
        times: 1,
        reply: { toolCalls: [{ name: "run_command", input: { command: "cat greeting.txt" } }] },
      },
    ],
    fallback: {
      text: "Fixed the greeting.",
      usage: { inputTokens: 1000, outputTokens: 7, cachedInputTokens: 400 },
    },
  };
}

function anthropicRequest(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  if (server === undefined) throw new Error("start the server first");
  return {
    task: TASK,
    workspace: fixture.workspace,
    model: {
      spec: "anthropic:claude-haiku-4-5",
      apiKey: API_KEY,
      languageModel: createAnthropic({ baseURL: `${server.url}/v1`, apiKey: API_KEY })(
        "claude-haiku-4-5",
      ),
    },
    limits: { timeoutMs: 20_000, maxTurns: 10 },
    sandbox: new UnsafeSandbox(),
    ...overrides,
  };
}

const bubblewrap = await usableBubblewrap();

describe("builtin harness (AI SDK over HTTP, scripted model)", () => {
  it("installs every folder of skillPaths, offers each, and removes them all afterwards", async () => {
    const punctuation = await secondSkill(
      fixture,
      "punctuation",
      "End greetings with an exclamation mark.\n",
    );
    server = await startScriptedServer({
      script: oneToolCallScript({ name: "load_skill", input: { name: "punctuation" } }, "Done."),
    });
    const trajectory = await new BuiltinHarness().run(
      // skillPaths wins over skillPath: the fixture's skill comes first because it is listed first.
      anthropicRequest({ skillPath: "/nonexistent", skillPaths: [fixture.skillPath, punctuation] }),
    );
    expect(trajectory.status, trajectory.error).toBe("completed");
    const system = server.requests[0]?.system ?? "";
    expect(system).toContain(`<name>${SKILL_NAME}</name>`);
    expect(system).toContain("<name>punctuation</name>");
    expect(server.requests[1]?.toolResults.at(-1)).toContain("exclamation mark");
    expect(trajectory.skillsShown).toEqual([SKILL_NAME, "punctuation"]);
    expect(trajectory.skills).toEqual([
      { name: SKILL_NAME, installedAt: `.agents/skills/${SKILL_NAME}` },
      { name: "punctuation", installedAt: ".agents/skills/punctuation" },
    ]);
    expect(trajectory.skill).toEqual({
      name: SKILL_NAME,
      installedAt: `.agents/skills/${SKILL_NAME}`,
    });
    // Loading the second folder's skill counts as activation.
    expect(trajectory.skillActivated).toBe(true);
    expect(trajectory.arm).toBe("with-skill");
    expect(await changedFiles(fixture.workspace)).toBe("");
  });

  it.skipIf(bubblewrap === undefined)(
    "passes the memory and CPU caps to its commands, where bubblewrap enforces the memory cap",
    async () => {
      // 300 MiB against a 96 MiB cap must die (cgroup OOM kill, or MemoryError under prlimit);
      // 8 MiB fits. Both run in the same command, so the shell reports each exit code.
      const command = memoryProbeCommand(300);
      server = await startScriptedServer({
        script: oneToolCallScript({ name: "run_command", input: { command } }, "Measured."),
      });
      const recorded = recordingLimits(bubblewrap as BubblewrapSandbox);
      const trajectory = await new BuiltinHarness().run(
        anthropicRequest({
          sandbox: recorded.sandbox,
          limits: { timeoutMs: 30_000, maxTurns: 4, memoryBytes: 96 * 1024 * 1024, cpus: 1 },
        }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(recorded.limits).toHaveLength(1);
      expect(recorded.limits[0]).toMatchObject({ memoryBytes: 96 * 1024 * 1024, cpus: 1 });
      const text = firstToolResultText(trajectory);
      expect(text).toMatch(/small=0\b/);
      expect(text).toMatch(/big=\d+/);
      expect(text).not.toMatch(/big=0\b/);
    },
  );

  it("offers the skill by progressive disclosure, loads it, and edits the file", async () => {
    server = await startScriptedServer({ script: script(true) });
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({ skillPath: fixture.skillPath }),
    );

    expect(trajectory.status, trajectory.error).toBe("completed");
    expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe("Hello, world\n");
    const first = server.requests[0];
    expect(first?.system).toContain(`<name>${SKILL_NAME}</name>`);
    expect(first?.system).toContain(`<description>${SKILL_DESCRIPTION}</description>`);
    // Only name and description up front: the body arrives through load_skill.
    expect(first?.system).not.toContain("capital H");
    expect(first?.toolNames).toContain("load_skill");
    expect(server.requests[1]?.toolResults.at(-1)).toContain("Always spell the greeting as Hello");

    expect(trajectory.skillActivated).toBe(true);
    expect(trajectory.skillsShown).toEqual([SKILL_NAME]);
    expect(trajectory.skillsShownSource).toBe("system-prompt");
    expect(
      trajectory.events.flatMap((event) => (event.type === "tool_call" ? [event.name] : [])),
    ).toEqual(["load_skill", "read_file", "edit_file", "run_command"]);
    // The shell command ran through the sandbox and saw the edited file.
    const commandResult = trajectory.events.filter((event) => event.type === "tool_result").at(-1);
    expect(commandResult).toMatchObject({ isError: false });
    expect(commandResult?.type === "tool_result" ? commandResult.output : "").toBe(
      "exit code: 0\nstdout:\nHello, world\n",
    );
    expect(trajectory.events).toContainEqual({
      type: "assistant_text",
      text: "Fixed the greeting.",
    });
    expect(server.requests).toHaveLength(5);
    // The last call's figures are the script's; cached tokens come only from it.
    expect(trajectory.usage.cachedInputTokens).toBe(400);
    expect(trajectory.usage.outputTokens).toBeGreaterThanOrEqual(7);

    expect(await changedFiles(fixture.workspace)).toBe(" M greeting.txt\n");
    const stored = JSON.stringify(trajectory);
    expect(stored).not.toContain(API_KEY);
    expect(parseTrajectory(JSON.parse(stored))).toMatchObject({ ok: true });
  });

  it("without the skill: no skill in the prompt, no load_skill tool, not activated", async () => {
    server = await startScriptedServer({ script: script(false) });
    const trajectory = await new BuiltinHarness().run(anthropicRequest());

    expect(trajectory.status, trajectory.error).toBe("completed");
    expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe("Hello, world\n");
    for (const recorded of server.requests) {
      expect(JSON.stringify(recorded.body)).not.toContain(SKILL_NAME);
      expect(recorded.toolNames).not.toContain("load_skill");
    }
    expect(trajectory.skillActivated).toBe(false);
    expect(trajectory.skillsShown).toEqual([]);
  });

  it("works over the OpenAI Responses API as well (any AI SDK model)", async () => {
    server = await startScriptedServer({ script: script(true) });
    const model = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY })("gpt-5");
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({
        skillPath: fixture.skillPath,
        model: { spec: "openai:gpt-5", apiKey: API_KEY, languageModel: model },
      }),
    );
    expect(trajectory.status, trajectory.error).toBe("completed");
    expect(server.requests.every((recorded) => recorded.api === "openai-responses")).toBe(true);
    expect(trajectory.skillActivated).toBe(true);
    expect(await readFile(join(fixture.workspace, "greeting.txt"), "utf8")).toBe("Hello, world\n");
  });

  it("resolves a spec string through src/model when no AI SDK model is given", async () => {
    server = await startScriptedServer({ script: script(true) });
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({
        skillPath: fixture.skillPath,
        model: { spec: "anthropic:claude-haiku-4-5", baseUrl: `${server.url}/v1`, apiKey: API_KEY },
      }),
    );
    expect(trajectory.status, trajectory.error).toBe("completed");
    expect(server.requests[0]).toMatchObject({ api: "anthropic", model: "claude-haiku-4-5" });
    expect(trajectory.skillActivated).toBe(true);
  });

  it("leaves the installed skill in place when asked to", async () => {
    server = await startScriptedServer({ script: { fallback: { text: "nothing to do" } } });
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({ skillPath: fixture.skillPath, keepSkillInstalled: true }),
    );
    expect(trajectory.status, trajectory.error).toBe("completed");
    expect(await changedFiles(fixture.workspace)).toBe(
      `?? .agents/skills/${SKILL_NAME}/SKILL.md\n`,
    );
  });

  it("stops at the turn limit with agent_error", async () => {
    // A model that never stops asking to list files.
    server = await startScriptedServer({
      script: { fallback: { toolCalls: [{ name: "list_files", input: {} }] } },
    });
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({ limits: { timeoutMs: 20_000, maxTurns: 3 } }),
    );
    expect(trajectory.status).toBe("agent_error");
    expect(trajectory.error).toBe("stopped after 3 turns without finishing");
    expect(server.requests).toHaveLength(3);
  });

  it("times out a slow model with status timeout", async () => {
    server = await startScriptedServer({
      script: { fallback: { text: "late" }, faults: { latencyMs: 60_000 } },
    });
    const started = Date.now();
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({ limits: { timeoutMs: 500 } }),
    );
    expect(trajectory.status).toBe("timeout");
    // Far below the model's 60 s, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("stops at once when the caller aborts, as infra_error (the run is not scored)", async () => {
    server = await startScriptedServer({
      script: { fallback: { text: "late" }, faults: { latencyMs: 60_000 } },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const trajectory = await new BuiltinHarness().run(
      anthropicRequest({ signal: controller.signal }),
    );
    expect(trajectory.status).toBe("infra_error");
    expect(trajectory.error).toBe("run aborted");
    // Far below the model's 60 s, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("reports an endpoint that keeps failing as infra_error after the SDK's retries", async () => {
    server = await startScriptedServer({
      script: { fallback: { text: "never" }, faults: { rate500: 1, seed: 1 } },
    });
    const trajectory = await new BuiltinHarness({ maxRetries: 1 }).run(anthropicRequest());
    expect(trajectory.status, trajectory.error).toBe("infra_error");
    // One call plus one retry, both answered 500.
    expect(server.requests.map((recorded) => recorded.fault)).toEqual(["500", "500"]);
  });
});
