import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { startCredentialProxy } from "../env/sandbox/loopback.js";
import type { LimitHit, Mount, NetworkPolicy, SandboxExecResult } from "../env/sandbox/types.js";
import { costOf, type ModelPrice, priceFor } from "../model/prices.js";
import { secretsFromEnvironment } from "../model/redact.js";
import type { ProviderName } from "../model/spec.js";
import type { SkillAgent } from "../skill/install.js";
import { type InstalledSkills, installSkillsFor } from "./skill-install.js";
import type {
  AgentLimits,
  AgentRunRequest,
  InstalledSkillRecord,
  TrajectoryUsage,
} from "./types.js";

const PROVIDER_PREFIXES = ["anthropic", "openai", "openai-compatible"];

/**
 * The model id a CLI expects, from a spec string: `anthropic:claude-haiku-4-5` → `claude-haiku-4-5`,
 * `openai-compatible:qwen3@http://host/v1` → `qwen3`; a bare id is returned unchanged.
 */
export function modelIdFromSpec(spec: string): string {
  const colon = spec.indexOf(":");
  if (colon <= 0) return spec;
  const provider = spec.slice(0, colon);
  if (!PROVIDER_PREFIXES.includes(provider)) return spec;
  const rest = spec.slice(colon + 1);
  const at = provider === "openai-compatible" ? rest.indexOf("@") : -1;
  return at === -1 ? rest : rest.slice(0, at);
}

/**
 * Usage with its cost in dollars, for agents that report tokens but no cost (Codex, the builtin
 * loop): the tokens at the model's list price (`model/prices.ts`, `overrides` first, as the
 * `model.prices` config section gives them). A cost the agent reported itself is kept; a model
 * without a known price stays without a cost (unknown, never $0 by accident). `provider` is the
 * one a bare model id is priced under (e.g. `openai` for Codex).
 */
export function pricedUsage(
  usage: TrajectoryUsage,
  spec: string,
  provider: ProviderName,
  overrides: Readonly<Record<string, ModelPrice>> = {},
): TrajectoryUsage {
  if (usage.costUsd !== undefined) return usage;
  const colon = spec.indexOf(":");
  const named = colon > 0 ? spec.slice(0, colon) : "";
  const price = priceFor(
    {
      provider: PROVIDER_PREFIXES.includes(named) ? (named as ProviderName) : provider,
      model: modelIdFromSpec(spec),
    },
    overrides,
  );
  return price === undefined ? usage : { ...usage, costUsd: costOf(usage, price) };
}

/**
 * The model endpoint as an agent in a sandbox sees it: a credential proxy on the host's loopback
 * (`env/sandbox/loopback.ts`) holding the real key, reachable inside through the loopback bridge.
 * The agent gets the proxy's URL and a per-run dummy key, so the real key is never in its
 * environment, its files or its process list, whatever it runs. The sandbox network is loopback
 * with only the proxy's port, unless the request asks for another policy.
 */
export interface ModelBridge {
  /** The base URL to give the agent (the upstream's path, on the proxy). */
  readonly baseUrl: string;
  /** The per-run dummy key to give the agent. */
  readonly apiKey: string;
  readonly network: NetworkPolicy;
  readonly loopbackPorts: number[];
  close(): Promise<void>;
}

export async function startModelBridge(
  request: AgentRunRequest,
  defaultBaseUrl: string,
): Promise<ModelBridge> {
  const proxy = await startCredentialProxy({
    upstream: request.model.baseUrl ?? defaultBaseUrl,
    ...(request.model.apiKey === undefined ? {} : { apiKey: request.model.apiKey }),
  });
  return {
    baseUrl: proxy.url,
    apiKey: proxy.dummyKey,
    network: request.network ?? "loopback",
    loopbackPorts: [proxy.port],
    close: () => proxy.close(),
  };
}

/**
 * Where the agent finds its workspace: the fixed mount path inside a sandbox; the host folder in
 * the unsafe pass-through, which has no mount namespace to put it anywhere else.
 */
export function workspacePathFor(request: AgentRunRequest, workspace: string): string {
  return request.sandbox.kind === "unsafe" ? workspace : (request.workspaceMountPath ?? workspace);
}

/** Where a CLI's per-run home folder appears inside a sandbox (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME). */
export const AGENT_HOME_INSIDE = "/home/agent";

/** The per-run home: its path for the agent, and the mount that puts it there. */
export function agentHome(
  request: AgentRunRequest,
  hostFolder: string,
): { path: string; mount: Mount } {
  const path = request.sandbox.kind === "unsafe" ? hostFolder : AGENT_HOME_INSIDE;
  return { path, mount: { hostPath: hostFolder, sandboxPath: path, readOnly: false } };
}

/**
 * Whether a CLI run failed to start at all (binary missing, not executable, a missing shared
 * library): exit 127 or the sandbox's exec error, and nothing from the agent itself. That is the
 * machine's fault, not the agent's: retried as infrastructure, never scored.
 */
export function cliDidNotStart(result: SandboxExecResult, producedEvents: boolean): boolean {
  if (producedEvents) return false;
  if (result.exitCode === 127) return true;
  return /execvp [^\n]*: (No such file or directory|Permission denied)|ENOENT|EACCES|error while loading shared libraries/.test(
    result.stderr,
  );
}

export async function requireWorkspace(workspace: string): Promise<string> {
  const info = await unlessMissing(workspace, stat(workspace));
  if (info === undefined || !info.isDirectory()) {
    throw new InputError("skill.workspace-not-directory", "workspace is not a folder", {
      file: workspace,
    });
  }
  return resolve(workspace);
}

/** The skill folders a request asks for: `skillPaths` when given, else `skillPath`, else none. */
export function requestedSkillPaths(request: AgentRunRequest): readonly string[] {
  if (request.skillPaths !== undefined) return request.skillPaths;
  return request.skillPath === undefined ? [] : [request.skillPath];
}

export function armOf(request: AgentRunRequest): string {
  return (
    request.arm ?? (requestedSkillPaths(request).length === 0 ? "without-skill" : "with-skill")
  );
}

/** Every value that must never reach a stored trajectory. */
export function secretsOf(request: AgentRunRequest): string[] {
  return [
    ...(request.model.apiKey === undefined ? [] : [request.model.apiKey]),
    ...secretsFromEnvironment(request.env ?? {}),
    ...secretsFromEnvironment(process.env),
  ];
}

/** Installs every requested skill folder; `undefined` when the request asks for none. */
export async function installRequestedSkills(
  request: AgentRunRequest,
  workspace: string,
  agent: SkillAgent,
): Promise<InstalledSkills | undefined> {
  const paths = requestedSkillPaths(request);
  if (paths.length === 0) return undefined;
  return installSkillsFor(agent, paths, workspace);
}

/**
 * The trajectory fields naming what was installed: `skills` lists every folder, `skill` keeps
 * the first for readers of the single-skill shape.
 */
export function installedSkillFields(installed: InstalledSkills | undefined): {
  skill?: InstalledSkillRecord;
  skills?: readonly InstalledSkillRecord[];
} {
  const records = (installed?.skills ?? []).map((skill) => ({
    name: skill.name,
    installedAt: skill.relativePath,
  }));
  const [first] = records;
  return first === undefined ? {} : { skill: first, skills: records };
}

/**
 * The sandbox resource limits of an agent process: wall clock, and memory / processes / CPU when
 * set (the sandbox applies its defaults to memory and processes otherwise).
 */
export function agentResourceLimits(limits: AgentLimits): {
  timeoutMs: number;
  memoryBytes?: number;
  maxProcesses?: number;
  cpus?: number;
} {
  return {
    timeoutMs: limits.timeoutMs,
    ...(limits.memoryBytes === undefined ? {} : { memoryBytes: limits.memoryBytes }),
    ...(limits.maxProcesses === undefined ? {} : { maxProcesses: limits.maxProcesses }),
    ...(limits.cpus === undefined ? {} : { cpus: limits.cpus }),
  };
}

/** A memory or process limit hit reported by the sandbox (the wall clock has its own status). */
export function resourceLimitHit(result: SandboxExecResult): LimitHit | undefined {
  return result.limitHit === undefined || result.limitHit.limit === "time"
    ? undefined
    : result.limitHit;
}

/** A private temporary folder, removed by the returned function (call it in `finally`). */
export async function temporaryFolder(
  prefix: string,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `skillsmith-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Raw log of a CLI run: stdout, then stderr under a marker, so both survive for debugging. */
export function rawLogOf(result: SandboxExecResult): string {
  return result.stderr === ""
    ? result.stdout
    : `${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/** Messages of an unreachable or failing model endpoint, as agents print them. */
const ENDPOINT_FAILURE =
  /API Error: (?:429|5\d\d|401|403)|Connection error|ECONNREFUSED|ECONNRESET|fetch failed|Unable to connect|stream disconnected|error sending request|exceeded retry limit|overloaded/i;

export function looksLikeEndpointFailure(text: string): boolean {
  return ENDPOINT_FAILURE.test(text);
}

/** The last lines of a stream, for error messages. */
export function tail(text: string, lines = 20): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
