import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CodexHarness } from "../src/agents/codex.js";
import type { AgentRunRequest } from "../src/agents/types.js";
import { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import type { ResourceLimits, SandboxV1 } from "../src/env/sandbox/types.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  API_KEY,
  canScanProcesses,
  changedFiles,
  codexBinary,
  createFixture,
  type Fixture,
  SKILL_DESCRIPTION,
  SKILL_NAME,
  survivingProcesses,
} from "./support/agents.js";

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
    limits: { timeoutMs: 60_000 },
    sandbox: new UnsafeSandbox(),
    ...overrides,
  };
}

const hasCodex = codexBinary !== undefined;

async function usableBubblewrap(): Promise<BubblewrapSandbox | undefined> {
  try {
    const sandbox = new BubblewrapSandbox();
    await sandbox.probe();
    return sandbox;
  } catch {
    return undefined;
  }
}
const bubblewrap = await usableBubblewrap();
/**
 * A memory cap on the CLI's whole process tree needs cgroups: the prlimit fallback caps address
 * space, which the Node wrapper's reservations exceed long before any real use.
 */
const cgroupLimits =
  bubblewrap !== undefined && bubblewrap.limitEnforcement().mechanism !== "prlimit";

/** A real sandbox that also notes the limits of every exec it is asked for. */
function recordingLimits(sandbox: SandboxV1): { sandbox: SandboxV1; limits: ResourceLimits[] } {
  const limits: ResourceLimits[] = [];
  return {
    limits,
    sandbox: {
      specificationVersion: "v1",
      kind: sandbox.kind,
      exec: (request) => {
        limits.push(request.limits);
        return sandbox.exec(request);
      },
    },
  };
}

/** A second skill folder beside the fixture's (a suite skill may ship several). */
async function secondSkill(name: string, body: string): Promise<string> {
  const path = join(fixture.root, "more-skills", name);
  await mkdir(path, { recursive: true });
  await writeFile(
    join(path, "SKILL.md"),
    `---\nname: ${name}\ndescription: The ${name} conventions of this project.\n---\n${body}`,
  );
  return path;
}

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
        "punctuation",
        "End greetings with an exclamation mark.\n",
      );
      server = await startScriptedServer({
        script: {
          rules: [
            {
              match: { lastUserMessage: "Fix the greeting" },
              times: 1,
              reply: {
                toolCalls: [
                  {
                    name: "exec_command",
                    input: { cmd: "cat .agents/skills/punctuation/SKILL.md" },
                  },
                ],
              },
            },
          ],
          fallback: { text: "Done." },
        },
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
      const command =
        "python3 -c 'bytearray(1024 * 1024 * 1024)' 2>/dev/null; echo big=$?; python3 -c 'bytearray(8 * 1024 * 1024)'; echo small=$?";
      server = await startScriptedServer({
        script: {
          rules: [
            {
              match: { lastUserMessage: "Fix the greeting" },
              times: 1,
              reply: { toolCalls: [{ name: "exec_command", input: { cmd: command } }] },
            },
          ],
          fallback: { text: "Measured." },
        },
      });
      const recorded = recordingLimits(bubblewrap as BubblewrapSandbox);
      const trajectory = await new CodexHarness({ stateDirectory }).run(
        request({
          sandbox: recorded.sandbox,
          limits: { timeoutMs: 60_000, memoryBytes: 384 * 1024 * 1024, cpus: 1 },
        }),
      );
      expect(trajectory.status, trajectory.error).toBe("completed");
      expect(recorded.limits).toEqual([
        { timeoutMs: 60_000, memoryBytes: 384 * 1024 * 1024, cpus: 1 },
      ]);
      const output = trajectory.events.find((event) => event.type === "tool_result");
      const text = output?.type === "tool_result" ? output.output : "";
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
});
