import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxExecResult } from "../env/sandbox/types.js";
import { AGENT_INSTALL_DIRECTORY } from "../skill/install.js";
import { isEndpointFailure, parseClaudeStreamJson } from "./claude-log.js";
import {
  AgentCliHarness,
  type AgentCliOptions,
  type AgentCliSpecifics,
  type CliCommandLine,
  type CliLog,
  type CliOutcome,
  type CliSession,
} from "./cli-run.js";
import { looksLikeEndpointFailure, tail, temporaryFolder } from "./common.js";

export type ClaudeCodeOptions = AgentCliOptions;

/** Where Claude Code discovers project skills, relative to its working directory. */
export const CLAUDE_SKILLS_DIRECTORY = AGENT_INSTALL_DIRECTORY["claude-code"];

/** Anthropic's API, for runs whose model names no base URL. */
const ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com";

/**
 * The real Claude Code CLI in print mode with stream-json output. Each run gets a fresh HOME and
 * CLAUDE_CONFIG_DIR (mounted at `/home/agent` inside), so no user-level skills, settings or
 * memory leak into a comparison; it talks to the model through the credential proxy with a
 * per-run dummy key (`startModelBridge`), so the real key never enters the sandbox; the
 * skill under test is copied to `.claude/skills/<name>/`. What the model was shown comes from the
 * CLI's own `system/init` line, which lists every skill it offers (including ones it ships with).
 */
export class ClaudeCodeHarness extends AgentCliHarness<ClaudeCodeOptions, ClaudeLog> {
  readonly name = "claude-code";

  protected definition(): AgentCliSpecifics<ClaudeLog> {
    return {
      cli: "claude",
      agent: "claude-code",
      defaultBaseUrl: ANTHROPIC_DEFAULT_URL,
      logFormat: "stream-json",
      createHome: () => temporaryFolder("claude-home"),
      commandLine: (session) => this.commandLine(session),
      readLog: (stdout) => {
        const parsed = parseClaudeStreamJson(stdout);
        return {
          ...parsed,
          producedEvents: parsed.events.length > 0 || parsed.result !== undefined,
        };
      },
      outcome: resultOutcome,
      conclude: async (log, session) => ({
        skillsShown: log.skillsShown ?? session.installed?.skills.map((skill) => skill.name) ?? [],
        skillsShownSource: log.skillsShown === undefined ? "installed" : "agent-log",
        usage: log.usage,
      }),
    };
  }

  private async commandLine(session: CliSession): Promise<CliCommandLine> {
    const { request, inside, bridge } = session;
    await mkdir(join(session.home, ".claude"), { recursive: true });
    const args = [
      "--print",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "bypassPermissions",
      "--model",
      session.model,
      "--no-session-persistence",
      ...(request.limits.maxTurns === undefined
        ? []
        : ["--max-turns", String(request.limits.maxTurns)]),
      ...(request.limits.budgetUsd === undefined
        ? []
        : ["--max-budget-usd", String(request.limits.budgetUsd)]),
      ...(this.options.extraArgs ?? []),
    ];
    const env: Record<string, string> = {
      CLAUDE_CONFIG_DIR: join(inside.path, ".claude"),
      // As root, bypassPermissions is refused unless the CLI is told it runs in a sandbox.
      IS_SANDBOX: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      ANTHROPIC_BASE_URL: bridge.baseUrl.replace(/\/v1\/?$/, ""),
      ANTHROPIC_API_KEY: bridge.apiKey,
    };
    return { args, env };
  }
}

/** Claude Code's stream-json log, read. */
type ClaudeLog = ReturnType<typeof parseClaudeStreamJson> & CliLog;

/** How a run ended that started and logged well: by its `result` line, else by its exit. */
function resultOutcome(parsed: ClaudeLog, result: SandboxExecResult): CliOutcome {
  if (parsed.result !== undefined) {
    if (!parsed.result.isError) return { status: "completed" };
    return {
      status: isEndpointFailure(parsed.result) ? "infra_error" : "agent_error",
      error: `${parsed.result.subtype}: ${parsed.result.text}`,
    };
  }
  const stderr = tail(result.stderr);
  return {
    status:
      looksLikeEndpointFailure(stderr) || parsed.apiRetries > 0 ? "infra_error" : "agent_error",
    error: `claude exited with code ${result.exitCode} without a result line${stderr === "" ? "" : `: ${stderr}`}`,
  };
}
