/**
 * The steps every real agent CLI harness (Claude Code, Codex) shares around its own command line:
 * run the CLI in the request's sandbox behind the model bridge, classify how the run ended
 * before the CLI's own result is read (time limit, endpoint, abort, a CLI that never started, a
 * damaged log), and turn what was collected into a redacted trajectory. One place, so the two
 * harnesses cannot drift apart on what counts as infrastructure and what counts against the agent.
 */
import type { SandboxExecResult } from "../env/sandbox/types.js";
import { redactSecrets } from "../model/redact.js";
import type { SkillAgent } from "../skill/install.js";
import { type AgentCliName, requireAgentCli, sandboxedCli } from "./cli-locate.js";
import {
  agentHome,
  agentResourceLimits,
  armOf,
  cliDidNotStart,
  installedSkillFields,
  installRequestedSkills,
  type ModelBridge,
  modelIdFromSpec,
  rawLogOf,
  requireWorkspace,
  resourceLimitHit,
  secretsOf,
  startModelBridge,
  tail,
  workspacePathFor,
} from "./common.js";
import { finishTrajectory } from "./trajectory.js";
import type {
  AgentHarnessV1,
  AgentRunRequest,
  SkillsShownSource,
  Trajectory,
  TrajectoryEvent,
  TrajectoryStatus,
  TrajectoryUsage,
} from "./types.js";

/** What every CLI run starts from: the binary, the workspace with the skills installed. */
export interface CliRunStart {
  readonly binary: string;
  readonly workspace: string;
  readonly installed: Awaited<ReturnType<typeof installRequestedSkills>>;
  /** The model id the CLI is given (the spec without its provider). */
  readonly model: string;
  /** Every secret to redact from the trajectory (the bridge's dummy key is added at the end). */
  readonly secrets: string[];
}

/**
 * Locates the CLI (unless `binary` names it), checks the workspace and installs the requested
 * skills where `agent` finds them. Call `installed?.uninstall()` in `finally` (unless the request
 * keeps them).
 */
export async function startCliRun(
  request: AgentRunRequest,
  cli: AgentCliName,
  agent: SkillAgent,
  binary: string | undefined,
): Promise<CliRunStart> {
  const located = binary ?? (await requireAgentCli(cli));
  const workspace = await requireWorkspace(request.workspace);
  const installed = await installRequestedSkills(request, workspace, agent);
  return {
    binary: located,
    workspace,
    installed,
    model: modelIdFromSpec(request.model.spec),
    secrets: secretsOf(request),
  };
}

export interface AgentCliExec {
  readonly request: AgentRunRequest;
  /** The CLI binary on the host; `sandboxedCli` decides how it is mounted. */
  readonly binary: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly workspace: string;
  readonly mountPath: string;
  readonly bridge: ModelBridge;
  readonly home: ReturnType<typeof agentHome>;
  /** Default: the request's signal. */
  readonly signal?: AbortSignal | undefined;
  readonly onStdout?: ((chunk: string) => void) | undefined;
}

/** Runs the CLI once in the request's sandbox, the workspace as its working directory. */
export async function execAgentCli(input: AgentCliExec): Promise<SandboxExecResult> {
  const cli = await sandboxedCli(input.binary);
  const signal = input.signal ?? input.request.signal;
  return input.request.sandbox.exec({
    command: [cli.program, ...input.args],
    workspace: input.workspace,
    workspaceMountPath: input.mountPath,
    cwd: input.mountPath,
    env: input.env,
    network: input.bridge.network,
    loopbackPorts: input.bridge.loopbackPorts,
    limits: agentResourceLimits(input.request.limits),
    extraMounts: [...cli.mounts, input.home.mount],
    ...(signal === undefined ? {} : { signal }),
    ...(input.onStdout === undefined ? {} : { onStdout: input.onStdout }),
  });
}

/** How a run ended: its status and, unless it completed, why. */
export interface CliOutcome {
  readonly status: TrajectoryStatus;
  readonly error?: string | undefined;
}

/**
 * The endings decided before the CLI's own result is read, in this order: the time limit, a
 * watched endpoint failure (already worded), an abort by the caller, a CLI that never started,
 * a log line that is not the CLI's format. Undefined when none applies.
 */
export function earlyCliOutcome(input: {
  readonly request: AgentRunRequest;
  readonly result: SandboxExecResult;
  /** As messages name it: `claude`, `codex`. */
  readonly cliName: string;
  /** The log's format, as messages name it: `stream-json`, `JSONL`. */
  readonly logFormat: string;
  readonly producedEvents: boolean;
  readonly malformedLine: { readonly lineNumber: number; readonly text: string } | undefined;
  readonly endpointFailure?: string | undefined;
}): CliOutcome | undefined {
  const { request, result } = input;
  if (result.timedOut) {
    return { status: "timeout", error: `timed out after ${request.limits.timeoutMs} ms` };
  }
  if (input.endpointFailure !== undefined) {
    return { status: "infra_error", error: input.endpointFailure };
  }
  if (request.signal?.aborted === true) return { status: "infra_error", error: "run aborted" };
  if (cliDidNotStart(result, input.producedEvents)) {
    return {
      status: "infra_error",
      error: `${input.cliName} could not start (exit ${result.exitCode}): ${tail(result.stderr, 5)}`,
    };
  }
  if (input.malformedLine !== undefined) {
    return {
      status: "agent_error",
      error: `malformed ${input.logFormat} at line ${input.malformedLine.lineNumber}: ${JSON.stringify(input.malformedLine.text)}`,
    };
  }
  return undefined;
}

/**
 * The trajectory of one CLI run: the error (if any) appended as the last event, the request's
 * task, arm and installed skills, the sandbox's exit and limit hit, the raw log; every known
 * secret and the bridge's dummy key redacted.
 */
export function finishCliTrajectory(input: {
  readonly harness: string;
  readonly request: AgentRunRequest;
  readonly model: string;
  readonly installed: Awaited<ReturnType<typeof installRequestedSkills>>;
  readonly events: readonly TrajectoryEvent[];
  readonly outcome: CliOutcome;
  readonly result: SandboxExecResult;
  /** `performance.now()` when the run started. */
  readonly started: number;
  readonly skillsShown: string[];
  readonly skillsShownSource: SkillsShownSource;
  readonly usage: TrajectoryUsage;
  readonly secrets: readonly string[];
  readonly bridge: ModelBridge;
}): Trajectory {
  const { request, result, outcome } = input;
  const events = [...input.events];
  if (outcome.error !== undefined) events.push({ type: "error", message: outcome.error });
  const limitHit = resourceLimitHit(result);
  const trajectory = finishTrajectory({
    harness: input.harness,
    model: input.model,
    ...(request.taskId === undefined ? {} : { taskId: request.taskId }),
    arm: armOf(request),
    events,
    ...installedSkillFields(input.installed),
    skillsShown: input.skillsShown,
    skillsShownSource: input.skillsShownSource,
    usage: input.usage,
    wallTimeMs: performance.now() - input.started,
    status: outcome.status,
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    exitCode: result.exitCode,
    ...(limitHit === undefined ? {} : { limitHit }),
    rawLog: rawLogOf(result),
  });
  return redactSecrets(trajectory, [...input.secrets, input.bridge.apiKey]);
}

/** A fresh host folder that serves as one run's HOME, and how to remove it. */
export interface CliHome {
  readonly path: string;
  remove(): Promise<void>;
}

/** What a harness knows once its CLI is located, its home made and the model bridge up. */
export interface CliSession extends CliRunStart {
  readonly request: AgentRunRequest;
  /** The home folder on the host. */
  readonly home: string;
  /** The home as the agent sees it, and the mount that puts it there. */
  readonly inside: ReturnType<typeof agentHome>;
  readonly bridge: ModelBridge;
  /** The workspace as the agent sees it: its working directory. */
  readonly mountPath: string;
}

/**
 * One run's command line, and an optional watch on the CLI's output while it runs. `runAgentCli`
 * appends `--` and the task to `args` (so a task starting with "-" is never read as a flag), and
 * gives `env` HOME (the per-run home) first and the request's own variables last.
 */
export interface CliCommandLine {
  /** The CLI's arguments before the task. */
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Stops the CLI early (default: the request's signal). */
  readonly signal?: AbortSignal | undefined;
  readonly onStdout?: ((chunk: string) => void) | undefined;
  /** Why the watch stopped the run, already worded; read once the CLI has exited. */
  readonly endpointFailure?: (() => string | undefined) | undefined;
  /** Called once the CLI has exited, however it ended (e.g. to drop a listener). */
  readonly release?: (() => void) | undefined;
}

/** What a CLI's log gave: its events, whether it logged anything of its own, its first bad line. */
export interface CliLog {
  readonly events: readonly TrajectoryEvent[];
  readonly producedEvents: boolean;
  readonly malformedLine?: { readonly lineNumber: number; readonly text: string } | undefined;
}

/** The rest of a trajectory that only the harness can read from its log and home. */
export interface CliConclusion {
  readonly skillsShown: string[];
  readonly skillsShownSource: SkillsShownSource;
  readonly usage: TrajectoryUsage;
}

/** What one agent CLI brings to `runAgentCli`; the rest of a run is the same for every CLI. */
export interface AgentCliDefinition<Log extends CliLog> {
  /** The trajectory's harness name, e.g. `claude-code`. */
  readonly harness: string;
  /** The CLI, as located and as messages name it. */
  readonly cli: AgentCliName;
  /** Whose folders the requested skills are installed in. */
  readonly agent: SkillAgent;
  /** The binary the user named; located when undefined. */
  readonly binary: string | undefined;
  /** The provider's API, for runs whose model names no base URL. */
  readonly defaultBaseUrl: string;
  /** The log's format, as messages name it: `stream-json`, `JSONL`. */
  readonly logFormat: string;
  createHome(): Promise<CliHome>;
  commandLine(session: CliSession): Promise<CliCommandLine>;
  readLog(stdout: string): Log;
  /** How a run ended that started and logged well. */
  outcome(log: Log, result: SandboxExecResult): CliOutcome;
  conclude(log: Log, session: CliSession): Promise<CliConclusion>;
}

/**
 * One run of an agent CLI: locate it and install the skills, make its home, start the model
 * bridge, run it in the request's sandbox, classify its ending and build the redacted trajectory.
 * The home, the bridge and the installed skills are removed however the run ends.
 */
export async function runAgentCli<Log extends CliLog>(
  request: AgentRunRequest,
  definition: AgentCliDefinition<Log>,
): Promise<Trajectory> {
  const start = await startCliRun(request, definition.cli, definition.agent, definition.binary);
  try {
    const home = await definition.createHome();
    try {
      const started = performance.now();
      const bridge = await startModelBridge(request, definition.defaultBaseUrl);
      try {
        const session: CliSession = {
          ...start,
          request,
          home: home.path,
          inside: agentHome(request, home.path),
          bridge,
          mountPath: workspacePathFor(request, start.workspace),
        };
        const commandLine = await definition.commandLine(session);
        let result: SandboxExecResult;
        try {
          result = await execAgentCli({
            request,
            binary: start.binary,
            args: [...commandLine.args, "--", request.task],
            env: { HOME: session.inside.path, ...commandLine.env, ...request.env },
            workspace: start.workspace,
            mountPath: session.mountPath,
            bridge,
            home: session.inside,
            signal: commandLine.signal,
            onStdout: commandLine.onStdout,
          });
        } finally {
          commandLine.release?.();
        }
        const log = definition.readLog(result.stdout);
        const outcome =
          earlyCliOutcome({
            request,
            result,
            cliName: definition.cli,
            logFormat: definition.logFormat,
            producedEvents: log.producedEvents,
            malformedLine: log.malformedLine,
            endpointFailure: commandLine.endpointFailure?.(),
          }) ?? definition.outcome(log, result);
        return finishCliTrajectory({
          harness: definition.harness,
          request,
          model: start.model,
          installed: start.installed,
          events: log.events,
          outcome,
          result,
          started,
          ...(await definition.conclude(log, session)),
          secrets: start.secrets,
          bridge,
        });
      } finally {
        await bridge.close();
      }
    } finally {
      await home.remove();
    }
  } finally {
    if (request.keepSkillInstalled !== true) await start.installed?.uninstall();
  }
}

/** A CLI's part of its definition: all but the harness name and binary, which the class gives. */
export type AgentCliSpecifics<Log extends CliLog> = Omit<
  AgentCliDefinition<Log>,
  "harness" | "binary"
>;

/** Options every CLI harness takes. */
export interface AgentCliOptions {
  /** Path of the CLI's binary; default: located in node_modules/.bin, then PATH. */
  readonly binary?: string;
  /** Appended to the command line (e.g. `--effort low`). */
  readonly extraArgs?: readonly string[];
}

/**
 * What every CLI harness class has: its options, and `run` as `runAgentCli` with the CLI's
 * definition, named by the harness and given the binary the options name.
 */
export abstract class AgentCliHarness<Options extends AgentCliOptions, Log extends CliLog>
  implements AgentHarnessV1
{
  readonly specificationVersion = "v1" as const;
  abstract readonly name: string;

  // Every field of a CLI harness's options is optional, so `{}` is a valid `Options` for each; the
  // cast only says so to the compiler, which cannot see it through the type parameter.
  constructor(protected readonly options: Options = {} as Options) {}

  protected abstract definition(): AgentCliSpecifics<Log>;

  run(request: AgentRunRequest): Promise<Trajectory> {
    return runAgentCli(request, {
      ...this.definition(),
      harness: this.name,
      binary: this.options.binary,
    });
  }
}
