/**
 * Harnesses that run no model: `replay` applies a recorded patch per task and arm (to evaluate
 * predictions produced elsewhere), `none` changes nothing (negative control) and `oracle` applies
 * the reference solution (positive control). They produce ordinary trajectories, so the rest of
 * a pipeline cannot tell them from an agent.
 */

import { cp, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { applyDiff } from "../core/apply-diff.js";
import { InputError } from "../core/errors.js";
import { pathExists, unlessMissing } from "../core/fs.js";
import type { NetworkPolicy } from "../env/sandbox/types.js";
import {
  agentResourceLimits,
  armOf,
  rawLogOf,
  requireWorkspace,
  resourceLimitHit,
  workspacePathFor,
} from "./common.js";
import { emptyUsage, finishTrajectory } from "./trajectory.js";
import type {
  AgentHarnessV1,
  AgentRunRequest,
  Trajectory,
  TrajectoryEvent,
  TrajectoryStatus,
} from "./types.js";

export interface PatchKey {
  readonly taskId: string;
  readonly arm: string;
}

/**
 * A reference solution: a unified diff, a folder whose files are copied over the workspace, or a
 * script (Harbor's `solution/solve.sh`) run inside the sandbox from the workspace, with its
 * folder mounted read-only at `/solution`.
 */
export type Solution = { readonly diff: string } | { readonly folder: string } | ScriptSolution;

export interface ScriptSolution {
  /** Host folder of the script and its helpers. */
  readonly script: string;
  /** The script to run, relative to `script` (e.g. `solve.sh`). */
  readonly entry: string;
  /** Network for the script; `none` unless the task allows the internet. */
  readonly network?: NetworkPolicy;
}

/** Where a script solution's folder appears inside the sandbox (Harbor's path). */
export const SOLUTION_MOUNT_PATH = "/solution";

async function exists(path: string): Promise<boolean> {
  return pathExists(path);
}

/**
 * Patches stored as `<directory>/<taskId>/<arm>.diff` (or `.patch`); a task without per-arm files
 * may have one `<directory>/<taskId>.diff` used for every arm.
 */
export function patchesFromDirectory(
  directory: string,
): (key: PatchKey) => Promise<string | undefined> {
  return async ({ taskId, arm }) => {
    for (const candidate of [
      join(directory, taskId, `${arm}.diff`),
      join(directory, taskId, `${arm}.patch`),
      join(directory, `${taskId}.diff`),
      join(directory, `${taskId}.patch`),
    ]) {
      if (await exists(candidate)) return readFile(candidate, "utf8");
    }
    return undefined;
  };
}

/** Solutions stored as `<directory>/<taskId>.diff` (or `.patch`), or a folder `<directory>/<taskId>/`. */
export function solutionsFromDirectory(
  directory: string,
): (taskId: string) => Promise<Solution | undefined> {
  return async (taskId) => {
    for (const candidate of [
      join(directory, `${taskId}.diff`),
      join(directory, `${taskId}.patch`),
    ]) {
      if (await exists(candidate)) return { diff: await readFile(candidate, "utf8") };
    }
    const folder = join(directory, taskId);
    const info = await unlessMissing(folder, stat(folder));
    return info?.isDirectory() === true ? { folder } : undefined;
  };
}

/** The one diff applier (`core/apply-diff.ts`), here for the callers that imported it from replay. */
export { applyDiff };

function controlTrajectory(
  harness: string,
  request: AgentRunRequest,
  started: number,
  events: TrajectoryEvent[],
  status: TrajectoryStatus,
  error?: string,
): Trajectory {
  if (error !== undefined) events.push({ type: "error", message: error });
  return finishTrajectory({
    harness,
    ...(request.taskId === undefined ? {} : { taskId: request.taskId }),
    arm: armOf(request),
    events,
    skillsShown: [],
    skillsShownSource: "none",
    usage: emptyUsage,
    wallTimeMs: performance.now() - started,
    status,
    ...(error === undefined ? {} : { error }),
    rawLog: events.map((event) => JSON.stringify(event)).join("\n"),
  });
}

/** Run a script solution in the request's sandbox, like an agent's own process tree. */
async function scriptTrajectory(
  harness: string,
  request: AgentRunRequest,
  workspace: string,
  solution: ScriptSolution,
  started: number,
): Promise<Trajectory> {
  const unsafe = request.sandbox.kind === "unsafe";
  const folder = unsafe ? solution.script : SOLUTION_MOUNT_PATH;
  const command = ["bash", `${folder}/${solution.entry}`];
  const id = "solve-1";
  const events: TrajectoryEvent[] = [
    { type: "tool_call", id, name: "run_solution", input: { command: command.join(" ") } },
  ];
  const result = await request.sandbox.exec({
    command,
    workspace,
    workspaceMountPath: request.workspaceMountPath ?? workspace,
    cwd: workspacePathFor(request, workspace),
    network: solution.network ?? "none",
    limits: agentResourceLimits(request.limits),
    ...(unsafe
      ? {}
      : {
          extraMounts: [
            { hostPath: solution.script, sandboxPath: SOLUTION_MOUNT_PATH, readOnly: true },
          ],
        }),
    ...(request.env === undefined ? {} : { env: request.env }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
  const output = rawLogOf(result);
  const failed = result.timedOut || result.exitCode !== 0;
  events.push({ type: "tool_result", id, output: output.slice(-8_000), isError: failed });
  const status: TrajectoryStatus = result.timedOut
    ? "timeout"
    : result.exitCode === 0
      ? "completed"
      : "agent_error";
  const limitHit = resourceLimitHit(result);
  const trajectory = controlTrajectory(
    harness,
    request,
    started,
    events,
    status,
    status === "agent_error" ? `${solution.entry} exited with ${result.exitCode}` : undefined,
  );
  return {
    ...trajectory,
    exitCode: result.exitCode,
    ...(limitHit === undefined ? {} : { limitHit }),
  };
}

/** A control run that failed for the reason given, counted against the "agent". */
function failedControl(
  harness: string,
  request: AgentRunRequest,
  started: number,
  events: TrajectoryEvent[],
  error: string,
): Trajectory {
  return controlTrajectory(harness, request, started, events, "agent_error", error);
}

async function diffTrajectory(
  harness: string,
  request: AgentRunRequest,
  workspace: string,
  diff: string,
  started: number,
): Promise<Trajectory> {
  const id = "apply-1";
  const events: TrajectoryEvent[] = [
    { type: "tool_call", id, name: "apply_patch", input: { patch: diff } },
  ];
  const result = await applyDiff(
    workspace,
    diff,
    request.signal === undefined ? {} : { signal: request.signal },
  );
  events.push({ type: "tool_result", id, output: result.message, isError: !result.ok });
  return result.ok
    ? controlTrajectory(harness, request, started, events, "completed")
    : failedControl(harness, request, started, events, `patch does not apply: ${result.message}`);
}

function requireTaskId(harness: string, request: AgentRunRequest): string {
  if (request.taskId === undefined) {
    throw new InputError(
      "agents.task-id-missing",
      `the ${harness} harness needs the request's taskId`,
      {
        field: "taskId",
      },
    );
  }
  return request.taskId;
}

/** The start of a control that works per task: the clock, the checked workspace, the task id. */
async function startControl(
  harness: string,
  request: AgentRunRequest,
): Promise<{ started: number; workspace: string; taskId: string }> {
  const started = performance.now();
  const workspace = await requireWorkspace(request.workspace);
  return { started, workspace, taskId: requireTaskId(harness, request) };
}

export interface ReplayOptions {
  /** The recorded patch of a task and arm; undefined when none was recorded. */
  readonly patchFor: (key: PatchKey) => Promise<string | undefined> | string | undefined;
}

export class ReplayHarness implements AgentHarnessV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "replay";

  constructor(private readonly options: ReplayOptions) {}

  async run(request: AgentRunRequest): Promise<Trajectory> {
    const { started, workspace, taskId } = await startControl(this.name, request);
    const key = { taskId, arm: armOf(request) };
    const diff = await this.options.patchFor(key);
    if (diff === undefined) {
      return failedControl(
        this.name,
        request,
        started,
        [],
        `no recorded patch for task "${key.taskId}", arm "${key.arm}"`,
      );
    }
    // An empty prediction is a legitimate answer: the agent changed nothing.
    if (diff.trim() === "") return controlTrajectory(this.name, request, started, [], "completed");
    return diffTrajectory(this.name, request, workspace, diff, started);
  }
}

/** Changes nothing: the negative control. */
export class NoneHarness implements AgentHarnessV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "none";

  async run(request: AgentRunRequest): Promise<Trajectory> {
    const started = performance.now();
    await requireWorkspace(request.workspace);
    return controlTrajectory(this.name, request, started, [], "completed");
  }
}

export interface OracleOptions {
  readonly solutionFor: (taskId: string) => Promise<Solution | undefined> | Solution | undefined;
}

/** Applies the reference solution: the positive control. */
export class OracleHarness implements AgentHarnessV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "oracle";

  constructor(private readonly options: OracleOptions) {}

  async run(request: AgentRunRequest): Promise<Trajectory> {
    const { started, workspace, taskId } = await startControl(this.name, request);
    const solution = await this.options.solutionFor(taskId);
    if (solution === undefined) {
      return failedControl(
        this.name,
        request,
        started,
        [],
        `no reference solution for task "${taskId}"`,
      );
    }
    if ("diff" in solution) {
      return diffTrajectory(this.name, request, workspace, solution.diff, started);
    }
    if ("script" in solution)
      return scriptTrajectory(this.name, request, workspace, solution, started);
    const id = "copy-1";
    const events: TrajectoryEvent[] = [
      { type: "tool_call", id, name: "copy_solution", input: { folder: solution.folder } },
    ];
    try {
      await cp(solution.folder, workspace, { recursive: true, force: true });
      events.push({ type: "tool_result", id, output: "copied", isError: false });
      return controlTrajectory(this.name, request, started, events, "completed");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      events.push({ type: "tool_result", id, output: message, isError: true });
      return failedControl(
        this.name,
        request,
        started,
        events,
        `cannot copy the solution: ${message}`,
      );
    }
  }
}
