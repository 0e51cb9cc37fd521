/**
 * The tools of the builtin agent: file access confined to the workspace (in-process), shell
 * commands through the run's `SandboxV1`, and skills by progressive disclosure. Tool failures
 * are thrown as `InputError`s (the model's input was unusable): the AI SDK hands their message
 * back to the model as a tool error, and the code says which mistake it was.
 */

import type { Dirent } from "node:fs";
import { mkdir, readdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
// Types only: the AI SDK loads when an agent creates its tools (start-up cost otherwise).
import type { ToolSet } from "ai";
import { z } from "zod";
import { InfrastructureError, InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import type { LimitHit, NetworkPolicy, ResourceLimits, SandboxV1 } from "../env/sandbox/types.js";

/** Caps that keep one tool result from flooding the model's context. */
export const TOOL_LIMITS = {
  readLines: 2_000,
  outputCharacters: 30_000,
  listEntries: 500,
  searchMatches: 200,
  searchFileBytes: 1024 * 1024,
  commandTimeoutMs: 120_000,
} as const;

const SKIPPED = new Set([".git", "node_modules"]);

/** The model named a path outside the workspace (code `agents.workspace-path-outside`). */
export class WorkspacePathError extends InputError {
  constructor(message: string) {
    super("agents.workspace-path-outside", message);
  }
}

function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === "" || (!rest.startsWith(`..${sep}`) && rest !== ".." && !isAbsolute(rest));
}

/**
 * Resolves a path the model gave against the workspace and refuses anything outside it: `..`
 * escapes, absolute paths elsewhere, and symbolic links whose target lies outside. The mount
 * path is accepted as an alias of the workspace, since commands see the workspace there.
 */
export async function resolveInWorkspace(
  workspace: string,
  requested: string,
  mountPath = workspace,
): Promise<string> {
  const root = await realpath(workspace);
  let candidate = requested;
  if (isAbsolute(candidate) && mountPath !== workspace && isInside(mountPath, candidate)) {
    candidate = relative(mountPath, candidate);
  }
  const absolute = resolve(root, candidate);
  if (!isInside(root, absolute)) {
    throw new WorkspacePathError(`path "${requested}" is outside the workspace`);
  }
  // The deepest existing ancestor decides where a symbolic link really leads.
  let existing = absolute;
  for (;;) {
    // Only "nothing there" walks up; a link loop or an unreadable folder is an error naming it.
    const real = await unlessMissing(existing, realpath(existing));
    if (real !== undefined) {
      if (!isInside(root, real)) {
        throw new WorkspacePathError(`path "${requested}" leads outside the workspace`);
      }
      break;
    }
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  return absolute;
}

function truncate(text: string, limit: number = TOOL_LIMITS.outputCharacters): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}\n[... ${text.length - limit} more characters cut]`;
}

async function walk(
  root: string,
  directory: string,
  depth: number,
  visit: (path: string, entry: Dirent) => Promise<boolean>,
): Promise<void> {
  const entries =
    (await unlessMissing(directory, readdir(directory, { withFileTypes: true }))) ?? [];
  entries.sort((left, right) => left.name.localeCompare(right.name));
  for (const entry of entries) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(directory, entry.name);
    if (!(await visit(path, entry))) return;
    if (entry.isDirectory() && depth > 1) await walk(root, path, depth - 1, visit);
  }
}

export interface OfferedSkill {
  readonly name: string;
  readonly description: string;
  readonly body: string;
  /** Workspace-relative folder of the installed skill. */
  readonly relativePath: string;
}

export interface WorkspaceToolsContext {
  readonly workspace: string;
  readonly mountPath: string;
  readonly sandbox: SandboxV1;
  readonly network: NetworkPolicy;
  readonly env?: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which everything must be done (commands get the time left). */
  readonly deadline: number;
  /** Memory, process and CPU caps of every command (the agent's limits; the loop runs here). */
  readonly resourceLimits?: Pick<ResourceLimits, "memoryBytes" | "maxProcesses" | "cpus">;
  readonly skills: readonly OfferedSkill[];
  /** Told when a command hit its memory or process limit (the agent's process tree did). */
  readonly onLimitHit?: (hit: LimitHit) => void;
}

export async function createWorkspaceTools(context: WorkspaceToolsContext): Promise<ToolSet> {
  const { tool } = await import("ai");
  const scope = toolScope(context);

  const tools: ToolSet = {
    read_file: tool({
      description:
        "Read a text file of the workspace. Paths are relative to the workspace root. Optional 1-based `offset` line and `limit` lines.",
      inputSchema: z.object({
        path: z.string(),
        offset: z.number().int().min(1).optional(),
        limit: z.number().int().min(1).optional(),
      }),
      execute: (input) => readWorkspaceFile(scope, input),
    }),
    write_file: tool({
      description: "Create or overwrite a file of the workspace with the given content.",
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path, content }) => {
        const file = await scope.inWorkspace(path);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
        return `wrote ${Buffer.byteLength(content)} bytes to ${scope.display(file)}`;
      },
    }),
    edit_file: tool({
      description:
        "Replace an exact string in a file. `old_string` must occur exactly once unless `replace_all` is true.",
      inputSchema: z.object({
        path: z.string(),
        old_string: z.string().min(1),
        new_string: z.string(),
        replace_all: z.boolean().optional(),
      }),
      execute: (input) => editWorkspaceFile(scope, input),
    }),
    list_files: tool({
      description:
        "List files and folders (folders end with /) below a workspace folder, `depth` levels deep (default 2).",
      inputSchema: z.object({
        path: z.string().optional(),
        depth: z.number().int().min(1).max(10).optional(),
      }),
      execute: (input) => listWorkspaceFiles(scope, input),
    }),
    search: tool({
      description:
        "Search file contents below a workspace folder for a regular expression (JavaScript syntax). Returns `path:line: text` lines.",
      inputSchema: z.object({
        pattern: z.string(),
        path: z.string().optional(),
        ignore_case: z.boolean().optional(),
      }),
      execute: (input) => searchWorkspace(scope, input),
    }),
    run_command: tool({
      description:
        "Run a shell command (sh -c) in the workspace, inside the sandbox. Returns the exit code and output.",
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }) => runWorkspaceCommand(context, command),
    }),
  };

  if (context.skills.length > 0) {
    tools.load_skill = tool({
      description:
        "Load the full instructions of one of the available skills (listed in the system prompt) by name.",
      inputSchema: z.object({ name: z.string() }),
      execute: ({ name }) => loadSkill(context, name),
    });
  }
  return tools;
}

/** What every file tool needs: a path of the workspace checked, and one shown relative to it. */
interface ToolScope {
  inWorkspace(path: string): Promise<string>;
  display(absolute: string): string;
}

function toolScope(context: WorkspaceToolsContext): ToolScope {
  return {
    inWorkspace: (path) => resolveInWorkspace(context.workspace, path, context.mountPath),
    display: (absolute) => relative(context.workspace, absolute) || ".",
  };
}

async function readWorkspaceFile(
  { inWorkspace }: ToolScope,
  {
    path,
    offset,
    limit,
  }: { path: string; offset?: number | undefined; limit?: number | undefined },
): Promise<string> {
  const file = await inWorkspace(path);
  const lines = (await readFile(file, "utf8")).split("\n");
  const start = (offset ?? 1) - 1;
  const count = Math.min(limit ?? TOOL_LIMITS.readLines, TOOL_LIMITS.readLines);
  const shown = lines.slice(start, start + count).join("\n");
  const rest = lines.length - (start + count);
  return truncate(rest > 0 ? `${shown}\n[... ${rest} more lines]` : shown);
}

async function editWorkspaceFile(
  { inWorkspace, display }: ToolScope,
  input: {
    path: string;
    old_string: string;
    new_string: string;
    replace_all?: boolean | undefined;
  },
): Promise<string> {
  const { path, old_string, new_string, replace_all } = input;
  const file = await inWorkspace(path);
  const text = await readFile(file, "utf8");
  const occurrences = text.split(old_string).length - 1;
  if (occurrences === 0)
    throw new InputError("agents.tool-edit-not-found", `old_string not found in ${display(file)}`);
  if (occurrences > 1 && replace_all !== true) {
    throw new InputError(
      "agents.tool-edit-ambiguous",
      `old_string occurs ${occurrences} times in ${display(file)}; give more context or set replace_all`,
    );
  }
  await writeFile(file, text.split(old_string).join(new_string));
  return `replaced ${occurrences} occurrence(s) in ${display(file)}`;
}

async function listWorkspaceFiles(
  { inWorkspace, display }: ToolScope,
  { path, depth }: { path?: string | undefined; depth?: number | undefined },
): Promise<string> {
  const root = await inWorkspace(path ?? ".");
  const listed: string[] = [];
  await walk(root, root, depth ?? 2, async (entryPath, entry) => {
    listed.push(`${display(entryPath)}${entry.isDirectory() ? "/" : ""}`);
    return listed.length < TOOL_LIMITS.listEntries;
  });
  return listed.length === 0 ? "(empty)" : listed.join("\n");
}

async function searchWorkspace(
  { inWorkspace, display }: ToolScope,
  {
    pattern,
    path,
    ignore_case,
  }: { pattern: string; path?: string | undefined; ignore_case?: boolean | undefined },
): Promise<string> {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, ignore_case === true ? "i" : "");
  } catch (error) {
    throw new InputError(
      "agents.tool-search-pattern-invalid",
      `invalid regular expression: ${(error as Error).message}`,
      {},
      { cause: error },
    );
  }
  const root = await inWorkspace(path ?? ".");
  const matches: string[] = [];
  const searchFile = async (file: string) => {
    // A file gone since the listing is skipped; one that cannot be read is an error.
    const info = await unlessMissing(file, stat(file));
    if (info === undefined || info.size > TOOL_LIMITS.searchFileBytes) return;
    const text = (await unlessMissing(file, readFile(file, "utf8"))) ?? "";
    if (text.includes("\u0000")) return;
    for (const [index, line] of text.split("\n").entries()) {
      if (regex.test(line)) matches.push(`${display(file)}:${index + 1}: ${line}`);
      if (matches.length >= TOOL_LIMITS.searchMatches) return;
    }
  };
  const info = await stat(root);
  if (info.isFile()) await searchFile(root);
  else {
    await walk(root, root, 64, async (entryPath, entry) => {
      if (entry.isFile()) await searchFile(entryPath);
      return matches.length < TOOL_LIMITS.searchMatches;
    });
  }
  return matches.length === 0 ? "(no matches)" : truncate(matches.join("\n"));
}

/** A shell command in the sandbox, with the agent's limits and the time left. */
async function runWorkspaceCommand(
  context: WorkspaceToolsContext,
  command: string,
): Promise<string> {
  const remaining = context.deadline - Date.now();
  if (remaining <= 0) {
    throw new InfrastructureError("agents.tool-deadline-passed", "no time left for commands");
  }
  const result = await context.sandbox.exec({
    command: ["sh", "-c", command],
    workspace: context.workspace,
    workspaceMountPath: context.mountPath,
    cwd: context.mountPath,
    ...(context.env === undefined ? {} : { env: context.env }),
    network: context.network,
    limits: {
      ...(context.resourceLimits?.memoryBytes === undefined
        ? {}
        : { memoryBytes: context.resourceLimits.memoryBytes }),
      ...(context.resourceLimits?.maxProcesses === undefined
        ? {}
        : { maxProcesses: context.resourceLimits.maxProcesses }),
      ...(context.resourceLimits?.cpus === undefined ? {} : { cpus: context.resourceLimits.cpus }),
      timeoutMs: Math.min(TOOL_LIMITS.commandTimeoutMs, remaining),
    },
    signal: context.signal,
  });
  const hit = result.limitHit?.limit === "time" ? undefined : result.limitHit;
  if (hit !== undefined) context.onLimitHit?.(hit);
  const parts = [
    result.timedOut ? "timed out" : `exit code: ${result.exitCode}`,
    hit === undefined ? "" : `sandbox: ${hit.detail}`,
    result.stdout === "" ? "" : `stdout:\n${result.stdout}`,
    result.stderr === "" ? "" : `stderr:\n${result.stderr}`,
  ];
  return truncate(parts.filter((part) => part !== "").join("\n"));
}

/** One offered skill's instructions, with the list of its other files. */
async function loadSkill(context: WorkspaceToolsContext, name: string): Promise<string> {
  const skill = context.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) {
    throw new InputError(
      "agents.tool-skill-unknown",
      `no skill named "${name}"; available: ${context.skills.map((s) => s.name).join(", ")}`,
    );
  }
  const folder = join(context.workspace, skill.relativePath);
  const files: string[] = [];
  await walk(folder, folder, 8, async (entryPath, entry) => {
    if (entry.isFile() && relative(folder, entryPath) !== "SKILL.md") {
      files.push(`${skill.relativePath}/${relative(folder, entryPath)}`);
    }
    return files.length < TOOL_LIMITS.listEntries;
  });
  const listing =
    files.length === 0
      ? ""
      : `\n\nFiles of this skill (read them with read_file when the instructions call for them):\n${files.join("\n")}`;
  return truncate(`Skill folder: ${skill.relativePath}\n\n${skill.body.trim()}${listing}`);
}
