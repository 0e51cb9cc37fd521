import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import type { NetworkPolicy, SandboxExecResult } from "../env/sandbox/types.js";
import { secretsFromEnvironment } from "../model/redact.js";
import type { SkillAgent } from "../skill/install.js";
import { type InstalledSkills, installSkillsFor } from "./skill-install.js";
import type { AgentLimits, AgentRunRequest, InstalledSkillRecord } from "./types.js";

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

function isLoopbackUrl(url: string | undefined): boolean {
  if (url === undefined) return false;
  try {
    const host = new URL(url).hostname;
    return host === "localhost" || host === "[::1]" || host === "::1" || host.startsWith("127.");
  } catch {
    return false;
  }
}

/** Loopback when the model is served on this machine, so nothing else is reachable. */
export function networkFor(request: AgentRunRequest): NetworkPolicy {
  return request.network ?? (isLoopbackUrl(request.model.baseUrl) ? "loopback" : "host");
}

/** The host port of a loopback model endpoint, which a loopback-only sandbox must let through. */
export function loopbackPortsFor(request: AgentRunRequest): number[] {
  const url = request.model.baseUrl;
  if (url === undefined || !isLoopbackUrl(url)) return [];
  const parsed = new URL(url);
  const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
  return [port];
}

/** Network fields of a sandbox request for an agent that talks to the request's model. */
export function agentNetwork(request: AgentRunRequest): {
  network: NetworkPolicy;
  loopbackPorts: number[];
} {
  return { network: networkFor(request), loopbackPorts: loopbackPortsFor(request) };
}

export async function requireWorkspace(workspace: string): Promise<string> {
  const info = await stat(workspace).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new InputError("workspace-not-directory", "workspace is not a folder", {
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

/** The sandbox resource limits of an agent process: wall clock, and memory / CPU when set. */
export function agentResourceLimits(limits: AgentLimits): {
  timeoutMs: number;
  memoryBytes?: number;
  cpus?: number;
} {
  return {
    timeoutMs: limits.timeoutMs,
    ...(limits.memoryBytes === undefined ? {} : { memoryBytes: limits.memoryBytes }),
    ...(limits.cpus === undefined ? {} : { cpus: limits.cpus }),
  };
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
