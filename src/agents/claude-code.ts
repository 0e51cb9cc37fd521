import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxExecResult } from "../env/sandbox/types.js";
import { AGENT_INSTALL_DIRECTORY } from "../skill/install.js";
import { isEndpointFailure, parseClaudeStreamJson } from "./claude-log.js";
import {
  type CliOutcome,
  earlyCliOutcome,
  execAgentCli,
  finishCliTrajectory,
  startCliRun,
} from "./cli-run.js";
import {
  agentHome,
  looksLikeEndpointFailure,
  startModelBridge,
  tail,
  temporaryFolder,
  workspacePathFor,
} from "./common.js";
import type { AgentHarnessV1, AgentRunRequest, Trajectory } from "./types.js";

export interface ClaudeCodeOptions {
  /** Path of the `claude` binary; default: located in node_modules/.bin, then PATH. */
  readonly binary?: string;
  /** Appended to the command line (e.g. `--effort low`). */
  readonly extraArgs?: readonly string[];
}

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
export class ClaudeCodeHarness implements AgentHarnessV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "claude-code";

  constructor(private readonly options: ClaudeCodeOptions = {}) {}

  async run(request: AgentRunRequest): Promise<Trajectory> {
    const { binary, workspace, installed, model, secrets } = await startCliRun(
      request,
      "claude",
      "claude-code",
      this.options.binary,
    );
    const home = await temporaryFolder("claude-home");
    const started = performance.now();
    const bridge = await startModelBridge(request, ANTHROPIC_DEFAULT_URL);
    try {
      await mkdir(join(home.path, ".claude"), { recursive: true });
      const inside = agentHome(request, home.path);
      const configDirectory = join(inside.path, ".claude");
      const args = [
        "--print",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        model,
        "--no-session-persistence",
        ...(request.limits.maxTurns === undefined
          ? []
          : ["--max-turns", String(request.limits.maxTurns)]),
        ...(request.limits.budgetUsd === undefined
          ? []
          : ["--max-budget-usd", String(request.limits.budgetUsd)]),
        ...(this.options.extraArgs ?? []),
        // `--` so a task starting with "-" is never read as a flag.
        "--",
        request.task,
      ];
      const env: Record<string, string> = {
        HOME: inside.path,
        CLAUDE_CONFIG_DIR: configDirectory,
        // As root, bypassPermissions is refused unless the CLI is told it runs in a sandbox.
        IS_SANDBOX: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        ANTHROPIC_BASE_URL: bridge.baseUrl.replace(/\/v1\/?$/, ""),
        ANTHROPIC_API_KEY: bridge.apiKey,
        ...request.env,
      };
      const result = await execAgentCli({
        request,
        binary,
        args,
        env,
        workspace,
        mountPath: workspacePathFor(request, workspace),
        bridge,
        home: inside,
      });
      const parsed = parseClaudeStreamJson(result.stdout);
      const outcome: CliOutcome =
        earlyCliOutcome({
          request,
          result,
          cliName: "claude",
          logFormat: "stream-json",
          producedEvents: parsed.events.length > 0 || parsed.result !== undefined,
          malformedLine: parsed.malformedLine,
        }) ?? resultOutcome(parsed, result);
      return finishCliTrajectory({
        harness: this.name,
        request,
        model,
        installed,
        events: parsed.events,
        outcome,
        result,
        started,
        skillsShown: parsed.skillsShown ?? installed?.skills.map((skill) => skill.name) ?? [],
        skillsShownSource: parsed.skillsShown === undefined ? "installed" : "agent-log",
        usage: parsed.usage,
        secrets,
        bridge,
      });
    } finally {
      await bridge.close();
      await home.remove();
      if (request.keepSkillInstalled !== true) await installed?.uninstall();
    }
  }
}

/** How a run ended that started and logged well: by its `result` line, else by its exit. */
function resultOutcome(
  parsed: ReturnType<typeof parseClaudeStreamJson>,
  result: SandboxExecResult,
): CliOutcome {
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
