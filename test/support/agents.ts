/**
 * Shared set-up for the agent harness tests: a temporary git repository with one file to fix, a
 * skill folder outside it, and a scan for processes left behind.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findAgentCli } from "../../src/agents/cli-locate.js";
import type { Trajectory } from "../../src/agents/types.js";
import { runProcess } from "../../src/core/process.js";
import type { Script, ScriptedToolCall } from "../../src/model/scripted/script.js";
import { git } from "./git.js";

/**
 * The agent's own time limit in these tests: a run is a CLI start and a few scripted turns, which
 * took over 60 s (the earlier limit) under a one-CPU cap at load 30, and the run then ended as a
 * timeout. Well inside the slow tier's 300 s test limit; the tests of the timeout itself set 2 s.
 */
export const agentTimeoutMs = 240_000;

export const SKILL_NAME = "greeting-style";
export const SKILL_DESCRIPTION = "How to write greetings in this project's text files.";
export const SKILL_BODY = "Always spell the greeting as Hello, with a capital H.\n";
/** A fake key: the tests search every stored byte for it. */
export const API_KEY = "sk-test-7f3c9a1e5b2d4f60a8c1e9d7b3a5f2c4";

export const claudeBinary = await findAgentCli("claude");
export const codexBinary = await findAgentCli("codex");

export interface Fixture {
  readonly root: string;
  readonly workspace: string;
  readonly skillPath: string;
  cleanup(): Promise<void>;
}

/** A git repository holding `greeting.txt` ("hullo, world") and a skill folder beside it. */
export async function createFixture(): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), "skillsmith-agents-test-"));
  const workspace = join(root, "repo");
  await mkdir(workspace);
  await writeFile(join(workspace, "greeting.txt"), "hullo, world\n");
  await git(workspace, "init", "-q", "-b", "main");
  await git(workspace, "add", ".");
  await git(workspace, "commit", "-q", "-m", "initial");
  const skillPath = join(root, "skills", SKILL_NAME);
  await mkdir(skillPath, { recursive: true });
  await writeFile(
    join(skillPath, "SKILL.md"),
    `---\nname: ${SKILL_NAME}\ndescription: ${SKILL_DESCRIPTION}\n---\n${SKILL_BODY}`,
  );
  return { root, workspace, skillPath, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** A second skill folder beside the fixture's (a suite skill may ship several). */
export async function secondSkill(fixture: Fixture, name: string, body: string): Promise<string> {
  const path = join(fixture.root, "more-skills", name);
  await mkdir(path, { recursive: true });
  await writeFile(
    join(path, "SKILL.md"),
    `---\nname: ${name}\ndescription: The ${name} conventions of this project.\n---\n${body}`,
  );
  return path;
}

/** A script answering the fixture's task ("Fix the greeting…") once with `toolCall`, then `fallback`. */
export function oneToolCallScript(toolCall: ScriptedToolCall, fallback: string): Script {
  return {
    rules: [
      {
        match: { lastUserMessage: "Fix the greeting" },
        times: 1,
        reply: { toolCalls: [toolCall] },
      },
    ],
    fallback: { text: fallback },
  };
}

/**
 * A shell command allocating `bigMiB` MiB, then 8 MiB, in two python3 processes and printing
 * each exit code (`big=N`, `small=N`), so a memory cap shows as a non-zero `big`.
 */
export function memoryProbeCommand(bigMiB: number): string {
  return `python3 -c 'bytearray(${bigMiB} * 1024 * 1024)' 2>/dev/null; echo big=$?; python3 -c 'bytearray(8 * 1024 * 1024)'; echo small=$?`;
}

/** The output of the trajectory's first tool result; empty when there is none. */
export function firstToolResultText(trajectory: Trajectory): string {
  const output = trajectory.events.find((event) => event.type === "tool_result");
  return output?.type === "tool_result" ? output.output : "";
}

/** `git status --porcelain` of the workspace: what a run changed, untracked files included. */
export async function changedFiles(workspace: string): Promise<string> {
  const result = await runProcess("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: workspace,
  });
  return result.stdout;
}

/** Live processes (`pid command line`) whose environment contains `marker` (unique per run). */
export function processesWithMarker(marker: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^\d+ \(.*\) Z/.test(stat)) continue;
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(marker)) {
        const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
        found.push(`${entry} ${command.trim()}`);
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * The processes still alive `graceMs` after a run returned. SIGKILL is delivered asynchronously,
 * so a process killed an instant ago may still be listed; a real orphan stays.
 */
export async function survivingProcesses(marker: string, graceMs = 3_000): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const found = processesWithMarker(marker);
    if (found.length === 0 || Date.now() >= deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const canScanProcesses = existsSync("/proc/self/environ");
