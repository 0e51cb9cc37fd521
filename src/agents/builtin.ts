import { realpath } from "node:fs/promises";
// Types only: the AI SDK loads when the agent runs (start-up cost otherwise).
import type { LanguageModel } from "ai";
import { InfrastructureError } from "../core/errors.js";
import type { LimitHit } from "../env/sandbox/types.js";
import { resolveProviderSettings } from "../model/config.js";
import { createLanguageModel } from "../model/provider.js";
import { redactSecrets } from "../model/redact.js";
import { parseModelSpec } from "../model/spec.js";
import { AGENT_INSTALL_DIRECTORY } from "../skill/install.js";
import { createWorkspaceTools, type OfferedSkill } from "./builtin-tools.js";
import {
  agentResourceLimits,
  armOf,
  installedSkillFields,
  installRequestedSkills,
  looksLikeEndpointFailure,
  requireWorkspace,
  secretsOf,
  workspacePathFor,
} from "./common.js";
import { addUsage, emptyUsage, finishTrajectory } from "./trajectory.js";
import type {
  AgentHarnessV1,
  AgentRunRequest,
  Trajectory,
  TrajectoryEvent,
  TrajectoryStatus,
  TrajectoryUsage,
} from "./types.js";

/** Where the builtin agent installs the skill: the cross-agent project convention. */
export const BUILTIN_SKILLS_DIRECTORY = AGENT_INSTALL_DIRECTORY.agents;

export const DEFAULT_MAX_TURNS = 50;

export interface BuiltinOptions {
  /** Used when the request carries no `languageModel`. */
  readonly languageModel?: LanguageModel;
  /**
   * Turns the request into a model when no `languageModel` is given. Default: the request's spec
   * string through `src/model/` (key and base URL from the request, else the environment, else
   * the provider's default URL).
   */
  readonly resolveModel?: (request: AgentRunRequest) => LanguageModel | Promise<LanguageModel>;
  /** Retries the AI SDK makes per model call on retryable failures (its default: 2). */
  readonly maxRetries?: number;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * The system prompt. Skills follow the Agent Skills progressive-disclosure pattern: only name,
 * description and location up front; the body through `load_skill`; the skill's other files
 * through `read_file`, when the body calls for them.
 */
export function builtinSystemPrompt(mountPath: string, skills: readonly OfferedSkill[]): string {
  const lines = [
    "You are a coding agent working in a software project.",
    `The project (workspace) root is ${mountPath}; file tool paths are relative to it.`,
    "Use the tools to inspect and change files and to run commands, then reply with a short summary of what you did.",
  ];
  if (skills.length > 0) {
    lines.push(
      "",
      "# Skills",
      "Skills are folders of instructions for particular kinds of tasks. When a task matches a skill's description, call load_skill with its name before you start, and follow the instructions it returns.",
      "<available_skills>",
      ...skills.map(
        (skill) =>
          `<skill><name>${escapeXml(skill.name)}</name><description>${escapeXml(skill.description)}</description><location>${escapeXml(skill.relativePath)}/SKILL.md</location></skill>`,
      ),
      "</available_skills>",
    );
  }
  return lines.join("\n");
}

/** Failures of the model endpoint (after the SDK's retries) as opposed to the agent's own. */
function isEndpointError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "AI_RetryError" || name === "AI_APICallError") return true;
  const message = error instanceof Error ? error.message : String(error);
  return looksLikeEndpointFailure(message);
}

/**
 * Our own agent loop on the AI SDK (`generateText` with tools, stopping after `maxTurns` steps),
 * usable with any model the SDK supports. The workspace's files are read and written in-process
 * (confined to the workspace); shell commands run through the request's sandbox.
 */
export class BuiltinHarness implements AgentHarnessV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "builtin";

  constructor(private readonly options: BuiltinOptions = {}) {}

  private async model(request: AgentRunRequest): Promise<LanguageModel> {
    const given = request.model.languageModel ?? this.options.languageModel;
    if (given !== undefined) return given;
    if (this.options.resolveModel !== undefined) return this.options.resolveModel(request);
    const spec = parseModelSpec(request.model.spec);
    const settings = resolveProviderSettings(spec, {
      flags: {
        ...(request.model.apiKey === undefined ? {} : { apiKey: request.model.apiKey }),
        ...(request.model.baseUrl === undefined ? {} : { baseUrl: request.model.baseUrl }),
      },
      env: process.env,
      config: {},
    });
    return createLanguageModel(spec, settings);
  }

  async run(request: AgentRunRequest): Promise<Trajectory> {
    const model = await this.model(request);
    const workspace = await realpath(await requireWorkspace(request.workspace));
    const installed = await installRequestedSkills(request, workspace, "agents");
    const skills: readonly OfferedSkill[] = installed?.skills ?? [];
    const mountPath = workspacePathFor(request, workspace);
    const secrets = secretsOf(request);
    let limitHit: LimitHit | undefined;
    const started = performance.now();
    const events: TrajectoryEvent[] = [];
    const rawLog: string[] = [];
    let usage: TrajectoryUsage = emptyUsage;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(
        new InfrastructureError(
          "agents.agent-timeout",
          `timed out after ${request.limits.timeoutMs} ms`,
        ),
      );
    }, request.limits.timeoutMs);
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted === true) onAbort();
    let status: TrajectoryStatus = "completed";
    let error: string | undefined;
    try {
      const tools = await createWorkspaceTools({
        workspace,
        mountPath,
        sandbox: request.sandbox,
        // Commands need no model endpoint: the loop talks to the model from this process.
        network: request.network ?? "none",
        ...(request.env === undefined ? {} : { env: request.env }),
        signal: controller.signal,
        deadline: Date.now() + request.limits.timeoutMs,
        resourceLimits: agentResourceLimits(request.limits),
        skills,
        onLimitHit: (hit) => {
          limitHit ??= hit;
        },
      });
      const maxTurns = request.limits.maxTurns ?? DEFAULT_MAX_TURNS;
      const { generateText, stepCountIs } = await import("ai");
      const result = await generateText({
        model,
        system: builtinSystemPrompt(mountPath, skills),
        prompt: request.task,
        tools,
        stopWhen: stepCountIs(maxTurns),
        abortSignal: controller.signal,
        ...(this.options.maxRetries === undefined ? {} : { maxRetries: this.options.maxRetries }),
        onStepFinish: (step) => {
          usage = addUsage(usage, {
            inputTokens: step.usage.inputTokens ?? 0,
            cachedInputTokens: step.usage.inputTokenDetails?.cacheReadTokens ?? 0,
            outputTokens: step.usage.outputTokens ?? 0,
          });
          for (const part of step.content) {
            if (part.type === "text" && part.text !== "") {
              events.push({ type: "assistant_text", text: part.text });
            } else if (part.type === "tool-call") {
              events.push({
                type: "tool_call",
                id: part.toolCallId,
                name: part.toolName,
                input: part.input,
              });
            } else if (part.type === "tool-result") {
              const output = part.output;
              events.push({
                type: "tool_result",
                id: part.toolCallId,
                output: typeof output === "string" ? output : JSON.stringify(output),
                isError: false,
              });
            } else if (part.type === "tool-error") {
              events.push({
                type: "tool_result",
                id: part.toolCallId,
                output: part.error instanceof Error ? part.error.message : String(part.error),
                isError: true,
              });
            }
          }
          rawLog.push(
            JSON.stringify({
              step: step.stepNumber,
              finishReason: step.finishReason,
              usage: step.usage,
              content: step.content.map((part) =>
                part.type === "tool-error"
                  ? {
                      ...part,
                      error: part.error instanceof Error ? part.error.message : part.error,
                    }
                  : part,
              ),
            }),
          );
        },
      });
      const lastStep = result.steps.at(-1);
      if (lastStep !== undefined && lastStep.finishReason === "tool-calls") {
        status = "agent_error";
        error = `stopped after ${maxTurns} turns without finishing`;
      }
    } catch (caught) {
      const message = caught instanceof Error ? caught.message : String(caught);
      if (timedOut) {
        status = "timeout";
        error = `timed out after ${request.limits.timeoutMs} ms`;
      } else if (request.signal?.aborted === true) {
        status = "infra_error";
        error = "run aborted";
      } else {
        status = isEndpointError(caught) ? "infra_error" : "agent_error";
        error = message;
      }
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      if (request.keepSkillInstalled !== true) await installed?.uninstall();
    }
    if (error !== undefined) events.push({ type: "error", message: error });
    const trajectory = finishTrajectory({
      harness: this.name,
      model: request.model.spec,
      ...(request.taskId === undefined ? {} : { taskId: request.taskId }),
      arm: armOf(request),
      events,
      ...installedSkillFields(installed),
      skillsShown: skills.map((skill) => skill.name),
      skillsShownSource: "system-prompt",
      usage,
      wallTimeMs: performance.now() - started,
      status,
      ...(error === undefined ? {} : { error }),
      ...(limitHit === undefined ? {} : { limitHit }),
      rawLog: rawLog.join("\n"),
    });
    return redactSecrets(trajectory, secrets);
  }
}
