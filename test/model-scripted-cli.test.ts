/**
 * End to end: `skillsmith model serve-scripted` driving the real Claude Code and Codex CLIs
 * offline. The CLIs, HTTP and files are real; only the model's words come from a script.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import { registerModel } from "../src/cli/commands/model.js";
import type { CliIo, CommandContext } from "../src/cli/context.js";
import { runProcess } from "../src/core/process.js";
import type { RecordedRequest } from "../src/model/scripted/server.js";
import { cliNodeArguments } from "./support/cli.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const root = resolve(import.meta.dirname, "..");
// The pinned CLIs come from the agent-CLI cache (`npm run agent-clis`), not devDependencies.
const claudeBinary = (await findAgentCli("claude")) ?? "claude";
const codexBinary = (await findAgentCli("codex")) ?? "codex";
const hasClaude = (await findAgentCli("claude")) !== undefined;
const hasCodex = (await findAgentCli("codex")) !== undefined;

const cleanups = cleanupsAfterEach();

const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-model-e2e-");

/**
 * Start `model serve-scripted` in-process through the real command; returns its URL and a
 * function that stops it the way a signal would.
 */
async function serveThroughCli(args: string[], cwd: string) {
  let stdout = "";
  let stderr = "";
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolveStop) => {
    stop = resolveStop;
  });
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    cwd,
    env: {},
  };
  const context: CommandContext = { io, exit: () => {} };
  const program = new Command("skillsmith").exitOverride();
  registerModel(program, context, { waitForStop: () => stopped });
  const finished = program.parseAsync(["model", "serve-scripted", ...args, "--json"], {
    from: "user",
  });
  for (let attempt = 0; attempt < 200 && stdout === ""; attempt += 1)
    await new Promise((wait) => setTimeout(wait, 10));
  const { url } = JSON.parse(stdout) as { url: string };
  let done = false;
  const close = async () => {
    if (done) return;
    done = true;
    stop();
    await finished;
  };
  cleanups.push(close);
  return { url, close, stderr: () => stderr };
}

async function readRecords(path: string): Promise<RecordedRequest[]> {
  const text = await readFile(path, "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RecordedRequest);
}

const claudeKey = "sk-ant-e2e-secret-0123456789";

async function runClaude(url: string, workspace: string, task: string) {
  const home = await temporaryDirectory();
  return runProcess(
    claudeBinary,
    [
      "-p",
      task,
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "bypassPermissions",
      "--model",
      "claude-haiku-4-5",
    ],
    {
      cwd: workspace,
      timeoutMs: 90_000,
      env: {
        PATH: process.env.PATH,
        IS_SANDBOX: "1",
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: claudeKey,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        HOME: home,
        CLAUDE_CONFIG_DIR: home,
      },
    },
  );
}

describe("model serve-scripted with real agent CLIs", () => {
  it.skipIf(!hasClaude)(
    "Claude Code writes the file the script asks for [needs the claude CLI: npm run agent-clis]",
    async () => {
      const workspace = await temporaryDirectory();
      const records = join(await temporaryDirectory(), "requests.jsonl");
      const server = await serveThroughCli(
        ["--script", join(root, "examples/scripts/write-file.yaml"), "--record", records],
        workspace,
      );
      const run = await runClaude(server.url, workspace, "Please create hello.txt.");
      expect(run.exitCode, run.stderr).toBe(0);
      expect(await readFile(join(workspace, "hello.txt"), "utf8")).toBe(
        "hello from the scripted model\n",
      );
      const events = run.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { type: string; result?: string });
      expect(events.at(-1)?.type).toBe("result");
      expect(events.at(-1)?.result).toBe("Created hello.txt.");

      await server.close();
      const recorded = await readRecords(records);
      const turns = recorded.filter((request) => request.api === "anthropic");
      expect(turns.length).toBeGreaterThanOrEqual(2);
      expect(turns[0]?.toolNames).toContain("Write");
      expect(turns[0]?.lastUserMessage).toContain("Please create hello.txt.");
      expect(turns.at(-1)?.toolResults.at(-1)).toMatch(/hello\.txt/);
      const fileText = await readFile(records, "utf8");
      expect(fileText).not.toContain(claudeKey);
    },
  );

  it.skipIf(!hasClaude)(
    "Claude Code lists a project skill and calls the Skill tool [needs the claude CLI: npm run agent-clis]",
    async () => {
      const workspace = await temporaryDirectory();
      const skillDirectory = join(workspace, ".claude", "skills", "hello-world");
      await mkdir(skillDirectory, { recursive: true });
      await writeFile(
        join(skillDirectory, "SKILL.md"),
        "---\nname: hello-world\ndescription: Greets the world in a file named greeting.txt.\n---\n\nWrite greeting.txt containing the word BANANA-SPLIT.\n",
      );
      const records = join(await temporaryDirectory(), "requests.jsonl");
      const server = await serveThroughCli(
        ["--script", join(root, "examples/scripts/call-skill.yaml"), "--record", records],
        workspace,
      );
      const run = await runClaude(server.url, workspace, "Greet the world.");
      expect(run.exitCode, run.stderr).toBe(0);
      await server.close();
      const turns = (await readRecords(records)).filter((request) => request.api === "anthropic");
      const first = turns[0];
      expect(first?.toolNames).toContain("Skill");
      // The skill's name and description were shown to the model.
      expect(JSON.stringify(first?.body)).toContain(
        "Greets the world in a file named greeting.txt.",
      );
      expect(first?.reply?.toolCalls?.[0]).toMatchObject({
        name: "Skill",
        input: { skill: "hello-world" },
      });
      // The CLI loaded the skill: its body reached the model in a later request.
      expect(turns.some((turn) => JSON.stringify(turn.body).includes("BANANA-SPLIT"))).toBe(true);
    },
  );

  it.skipIf(!hasCodex)(
    "Codex runs the scripted exec_command over the Responses API [needs the codex CLI: npm run agent-clis]",
    async () => {
      const base = await temporaryDirectory();
      const workspace = join(base, "workspace");
      // Codex refuses to set up its sandbox helpers when CODEX_HOME lies inside the system
      // temporary directory, so TMPDIR points elsewhere for the run.
      const codexHome = join(base, "codex-home");
      const codexTemporary = join(base, "tmp");
      await Promise.all([workspace, codexHome, codexTemporary].map((path) => mkdir(path)));
      const records = join(base, "requests.jsonl");
      const server = await serveThroughCli(
        ["--script", join(root, "examples/scripts/write-file.yaml"), "--record", records],
        workspace,
      );
      await writeFile(
        join(codexHome, "config.toml"),
        [
          'model = "gpt-5-mini"',
          'model_provider = "scripted"',
          "",
          "[model_providers.scripted]",
          'name = "Scripted"',
          `base_url = "${server.url}/v1"`,
          'wire_api = "responses"',
          'env_key = "SCRIPTED_API_KEY"',
          "",
        ].join("\n"),
      );
      const codexKey = "sk-codex-e2e-secret-0123456789";
      const run = await runProcess(
        codexBinary,
        [
          "exec",
          "--json",
          "--skip-git-repo-check",
          "--sandbox",
          "workspace-write",
          "Please create hello.txt.",
        ],
        {
          cwd: workspace,
          timeoutMs: 90_000,
          env: {
            PATH: process.env.PATH,
            HOME: codexHome,
            CODEX_HOME: codexHome,
            TMPDIR: codexTemporary,
            SCRIPTED_API_KEY: codexKey,
          },
        },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(await readFile(join(workspace, "hello.txt"), "utf8")).toBe(
        "hello from the scripted model\n",
      );
      const events = run.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { type: string; usage?: { output_tokens?: number } });
      const completed = events.find((event) => event.type === "turn.completed");
      // Scripted usage: 40 output tokens for the call, 8 for the final answer.
      expect(completed?.usage?.output_tokens).toBe(48);
      await server.close();
      const turns = (await readRecords(records)).filter(
        (request) => request.api === "openai-responses",
      );
      expect(turns).toHaveLength(2);
      expect(turns[0]?.stream).toBe(true);
      expect(turns[0]?.toolNames).toContain("exec_command");
      expect(turns[0]?.system).toMatch(/Codex/);
      expect(turns[1]?.toolResults).toHaveLength(1);
      expect(turns[1]?.toolResults[0]).toMatch(/exited with code 0/);
      expect(await readFile(records, "utf8")).not.toContain(codexKey);
    },
  );

  it("the binary serves until SIGTERM and exits 0", async () => {
    const directory = await temporaryDirectory();
    const scriptPath = join(directory, "script.json");
    await writeFile(scriptPath, JSON.stringify({ turns: [{ text: "pong" }] }));
    const controller = new AbortController();
    let output = "";
    let resolveUrl: (url: string) => void = () => {};
    const urlPromise = new Promise<string>((resolveFound) => {
      resolveUrl = resolveFound;
    });
    const child = runProcess(
      process.execPath,
      [...cliNodeArguments(), "model", "serve-scripted", "--script", scriptPath, "--json"],
      {
        cwd: root,
        signal: controller.signal,
        timeoutMs: 60_000,
        onStdout: (chunk) => {
          output += chunk;
          const match = /"url":\s*"([^"]+)"/.exec(output);
          if (match?.[1] !== undefined) resolveUrl(match[1]);
        },
      },
    );
    const url = await urlPromise;
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "ping" }] }),
    });
    const completion = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0]?.message.content).toBe("pong");
    controller.abort();
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain("served 1 request(s)");
  });

  it("rejects a bad script with an input error naming the file and field", async () => {
    const directory = await temporaryDirectory();
    const scriptPath = join(directory, "bad.json");
    await writeFile(scriptPath, JSON.stringify({ turns: [{ txt: "typo" }] }));
    const result = await runProcess(
      process.execPath,
      [...cliNodeArguments(), "model", "serve-scripted", "--script", scriptPath],
      { cwd: root, timeoutMs: 60_000 },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(scriptPath);
    expect(result.stderr).toContain('field "turns.0"');
  });
});
