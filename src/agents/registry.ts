import { UsageError } from "../core/errors.js";
import { BuiltinHarness, type BuiltinOptions } from "./builtin.js";
import { ClaudeCodeHarness, type ClaudeCodeOptions } from "./claude-code.js";
import { CodexHarness, type CodexOptions } from "./codex.js";
import {
  NoneHarness,
  OracleHarness,
  type OracleOptions,
  ReplayHarness,
  type ReplayOptions,
} from "./replay.js";
import type { AgentHarnessV1 } from "./types.js";

export const HARNESS_NAMES = [
  "claude-code",
  "codex",
  "builtin",
  "replay",
  "none",
  "oracle",
] as const;

export type HarnessName = (typeof HARNESS_NAMES)[number];

export interface HarnessOptionsByName {
  "claude-code": ClaudeCodeOptions;
  codex: CodexOptions;
  builtin: BuiltinOptions;
  replay: ReplayOptions;
  none: Record<string, never>;
  oracle: OracleOptions;
}

export function isHarnessName(name: string): name is HarnessName {
  return (HARNESS_NAMES as readonly string[]).includes(name);
}

/** Creates a harness by name; replay and oracle need their options (where answers come from). */
export function createHarness<Name extends HarnessName>(
  name: Name,
  ...options: Name extends "replay" | "oracle"
    ? [HarnessOptionsByName[Name]]
    : [HarnessOptionsByName[Name]?]
): AgentHarnessV1;
export function createHarness(name: string, options?: unknown): AgentHarnessV1;
export function createHarness(name: string, options?: unknown): AgentHarnessV1 {
  switch (name) {
    case "claude-code":
      return new ClaudeCodeHarness(options as ClaudeCodeOptions | undefined);
    case "codex":
      return new CodexHarness(options as CodexOptions | undefined);
    case "builtin":
      return new BuiltinHarness(options as BuiltinOptions | undefined);
    case "none":
      return new NoneHarness();
    case "replay":
    case "oracle": {
      if (options === undefined) {
        throw new UsageError(
          "harness-options-missing",
          `the ${name} harness needs ${name === "replay" ? "recorded patches" : "reference solutions"}`,
        );
      }
      return name === "replay"
        ? new ReplayHarness(options as ReplayOptions)
        : new OracleHarness(options as OracleOptions);
    }
    default:
      throw new UsageError(
        "harness-unknown",
        `unknown agent harness "${name}"; expected one of: ${HARNESS_NAMES.join(", ")}`,
      );
  }
}
