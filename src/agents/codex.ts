import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import type { SandboxExecResult } from "../env/sandbox/types.js";
import type { ModelPrice } from "../model/prices.js";
import { AGENT_INSTALL_DIRECTORY } from "../skill/install.js";
import {
  AgentCliHarness,
  type AgentCliOptions,
  type AgentCliSpecifics,
  type CliCommandLine,
  type CliLog,
  type CliOutcome,
  type CliSession,
} from "./cli-run.js";
import { parseCodexJsonl, skillsListedInCodexSession } from "./codex-log.js";
import { looksLikeEndpointFailure, pricedUsage, tail } from "./common.js";
import { parseJsonOrUndefined } from "./json-lines.js";
import type { AgentRunRequest } from "./types.js";

/**
 * How Codex isolates the shell commands it runs:
 * - `workspace-write`: Codex's own sandbox (bubblewrap on Linux; writes only in the workspace).
 *   It needs a CODEX_HOME outside the system temporary folder, where it puts helper links.
 * - `bypass`: `--dangerously-bypass-approvals-and-sandbox`, for when our `SandboxV1` already
 *   isolates the run (nested bubblewrap does not work inside most sandboxes).
 */
export type CodexSandboxMode = "workspace-write" | "bypass";

export interface CodexOptions extends AgentCliOptions {
  /** Default: `workspace-write` when running in the unsafe pass-through sandbox, else `bypass`. */
  readonly codexSandbox?: CodexSandboxMode;
  /** Retries Codex itself makes per model request and stream (its defaults when unset). */
  readonly maxRetries?: number;
  /** Parent of the per-run HOME/CODEX_HOME folders; default `~/.cache/skillsmith/agent-homes`. */
  readonly stateDirectory?: string;
  /**
   * Codex waits for an unreachable endpoint indefinitely, printing `error` events; after this
   * many in a row that say the endpoint failed, the run is stopped as `infra_error` (default 3).
   */
  readonly endpointFailureLimit?: number;
  /**
   * Prices (dollars per million tokens) that win over the built-in table, keyed `provider:model`
   * or model id, as the `model.prices` config section gives them. Codex reports tokens only; the
   * run's cost is its tokens at this price, so a budget stops Codex runs too.
   */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
}

/** Where Codex discovers project skills, relative to its working directory. */
export const CODEX_SKILLS_DIRECTORY = AGENT_INSTALL_DIRECTORY.codex;

/** The variable our generated provider reads its key from, so the key never sits in a file. */
const KEY_VARIABLE = "SKILLSMITH_CODEX_API_KEY";

function tomlString(value: string): string {
  // JSON string escapes are valid TOML basic-string escapes.
  return JSON.stringify(value);
}

/** OpenAI's API, for runs whose model names no base URL. */
const OPENAI_DEFAULT_URL = "https://api.openai.com/v1";

function configToml(model: string, baseUrl: string, maxRetries?: number): string {
  const lines = [
    `model = ${tomlString(model)}`,
    `model_provider = "skillsmith"`,
    "",
    "[model_providers.skillsmith]",
    `name = "skillsmith"`,
    `base_url = ${tomlString(baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = "${KEY_VARIABLE}"`,
  ];
  if (maxRetries !== undefined) {
    lines.push(`request_max_retries = ${maxRetries}`, `stream_max_retries = ${maxRetries}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Names of skills (SKILL.md frontmatter `name`, else folder name) found below `root`. */
async function skillNamesBelow(root: string, depth = 3): Promise<string[]> {
  const entries = (await unlessMissing(root, readdir(root, { withFileTypes: true }))) ?? [];
  const names: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const folder = join(root, entry.name);
    const skillPath = join(folder, "SKILL.md");
    const skillFile = await unlessMissing(skillPath, readFile(skillPath, "utf8"));
    if (skillFile !== undefined) {
      const name = /^name:\s*["']?([^"'\n]+?)["']?\s*$/m.exec(skillFile)?.[1];
      names.push(name ?? entry.name);
    } else if (depth > 1) {
      names.push(...(await skillNamesBelow(folder, depth - 1)));
    }
  }
  return names;
}

/** The message of a top-level `error` event line, else undefined (never throws). */
function endpointErrorMessage(line: string): string | undefined {
  if (!line.includes('"error"')) return undefined;
  // A line that is not JSON (undefined) is not an error event.
  const value = parseJsonOrUndefined(line) as
    | { type?: unknown; message?: unknown }
    | null
    | undefined;
  return value?.type === "error" && typeof value.message === "string" ? value.message : undefined;
}

/** The skills listed in the first session file Codex stored under `sessions` (a per-run folder). */
async function skillsListedInSessions(sessions: string): Promise<string[] | undefined> {
  const files = (await unlessMissing(sessions, readdir(sessions, { recursive: true }))) ?? [];
  const rollouts = files.filter((file) => file.endsWith(".jsonl")).sort();
  for (const file of rollouts) {
    const listed = skillsListedInCodexSession(await readFile(join(sessions, file), "utf8"));
    if (listed !== undefined) return listed;
  }
  return undefined;
}

/**
 * The real Codex CLI (`codex exec --json`), stdin closed. Each run gets fresh HOME and CODEX_HOME
 * folders with a generated `config.toml` whose custom provider points at the model's base URL
 * (Responses wire API) and reads its key from the environment. The skill goes to
 * `.agents/skills/<name>/`. Codex's JSONL does not list the skills it offered; the session file it
 * stores in CODEX_HOME does, so `skillsShown` comes from there (falling back to the skill folders
 * it reads when that file is missing or changes shape).
 */
export class CodexHarness extends AgentCliHarness<CodexOptions, CodexLog> {
  readonly name = "codex";

  protected definition(): AgentCliSpecifics<CodexLog> {
    return {
      cli: "codex",
      agent: "codex",
      defaultBaseUrl: OPENAI_DEFAULT_URL,
      logFormat: "JSONL",
      createHome: async () => {
        const stateDirectory =
          this.options.stateDirectory ?? join(homedir(), ".cache", "skillsmith", "agent-homes");
        await mkdir(stateDirectory, { recursive: true });
        const home = await mkdtemp(join(stateDirectory, "codex-"));
        return { path: home, remove: () => rm(home, { recursive: true, force: true }) };
      },
      commandLine: (session) => this.commandLine(session),
      readLog: (stdout) => {
        const parsed = parseCodexJsonl(stdout);
        return { ...parsed, producedEvents: parsed.events.length > 0 || parsed.turnsCompleted > 0 };
      },
      outcome: exitOutcome,
      conclude: async (log, session) => {
        const codexHome = join(session.home, ".codex");
        const listed = await skillsListedInSessions(join(codexHome, "sessions"));
        const shown = listed ?? [
          ...(await skillNamesBelow(join(session.workspace, CODEX_SKILLS_DIRECTORY), 1)),
          ...(await skillNamesBelow(join(codexHome, "skills"))),
          ...(await skillNamesBelow(join(session.home, ".agents", "skills"), 1)),
        ];
        return {
          skillsShown: [...new Set(shown)].sort(),
          skillsShownSource: listed === undefined ? "discovered" : "agent-log",
          usage: pricedUsage(log.usage, session.request.model.spec, "openai", this.options.prices),
        };
      },
    };
  }

  private async commandLine(session: CliSession): Promise<CliCommandLine> {
    const { request, inside, bridge } = session;
    const codexHome = join(session.home, ".codex");
    await mkdir(codexHome, { recursive: true });
    // The provider always points at the credential proxy; the key it reads is the dummy.
    await writeFile(
      join(codexHome, "config.toml"),
      configToml(session.model, bridge.baseUrl, this.options.maxRetries),
    );
    const mode =
      this.options.codexSandbox ??
      (request.sandbox.kind === "unsafe" ? "workspace-write" : "bypass");
    const args = [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--color",
      "never",
      ...(mode === "bypass"
        ? ["--dangerously-bypass-approvals-and-sandbox"]
        : ["--sandbox", "workspace-write"]),
      "--cd",
      session.mountPath,
      ...(this.options.extraArgs ?? []),
    ];
    const env: Record<string, string> = {
      CODEX_HOME: join(inside.path, ".codex"),
      [KEY_VARIABLE]: bridge.apiKey,
    };
    return { args, env, ...watchEndpoint(request, this.options.endpointFailureLimit ?? 3) };
  }
}

/** Codex's JSONL log, read. */
type CodexLog = ReturnType<typeof parseCodexJsonl> & CliLog;

/**
 * A watch on Codex's stream for repeated endpoint failures: Codex waits for an unreachable
 * endpoint indefinitely, so after `failureLimit` failing `error` events in a row the run is
 * stopped, and the ending names the endpoint.
 */
function watchEndpoint(
  request: AgentRunRequest,
  failureLimit: number,
): Omit<CliCommandLine, "args" | "env"> {
  const stopper = new AbortController();
  const onAbort = () => stopper.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted === true) onAbort();
  let pending = "";
  let failuresInARow = 0;
  let endpointFailure: string | undefined;
  return {
    signal: stopper.signal,
    onStdout: (chunk) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const message = endpointErrorMessage(line);
        if (message !== undefined && looksLikeEndpointFailure(message)) {
          failuresInARow += 1;
          if (failuresInARow >= failureLimit && endpointFailure === undefined) {
            endpointFailure = message;
            stopper.abort(new InfrastructureError("agents.agent-endpoint-failure", message));
          }
        } else if (line.trim() !== "") {
          failuresInARow = 0;
        }
      }
    },
    endpointFailure: () =>
      endpointFailure === undefined
        ? undefined
        : `model endpoint failed ${failureLimit} times in a row: ${endpointFailure}`,
    release: () => request.signal?.removeEventListener("abort", onAbort),
  };
}

/** How a run ended that started and logged well: completed turns and exit 0, else its failure. */
function exitOutcome(parsed: CodexLog, result: SandboxExecResult): CliOutcome {
  if (parsed.turnsCompleted > 0 && result.exitCode === 0) return { status: "completed" };
  const message = parsed.failures.at(-1) ?? tail(result.stderr);
  return {
    status: looksLikeEndpointFailure(message) ? "infra_error" : "agent_error",
    error: `codex exited with code ${result.exitCode}${message === "" ? "" : `: ${message}`}`,
  };
}
