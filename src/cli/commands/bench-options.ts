/**
 * Flag parsers and option groups the `bench` subcommands share (and `eval` and `worker` use):
 * each flag's meaning is decided in one place, so the same flag cannot mean two things.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import {
  AGENT_KINDS,
  type AgentKind,
  DEFAULT_WEAK_THRESHOLD,
  type SandboxKind,
  type SuiteSelection,
} from "../../bench/index.js";
import { UsageError } from "../../core/errors.js";
import { isSandboxKind, type SetupNetworkChoice, sandboxKinds } from "../../env/index.js";

/** A commander parser for `flag`'s value: a whole number ≥ 1, else a `UsageError`. */
export function positiveInteger(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) {
      throw new UsageError(
        "cli.option-invalid",
        `${flag} expects a positive integer (got "${value}")`,
      );
    }
    return parsed;
  };
}

/** A commander parser for a repeatable flag: every value, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--skill` and `--requirement` as the suite selection they mean. */
export function selectionOf(options: { skill?: string[]; requirement?: string[] }): SuiteSelection {
  return {
    ...(options.skill === undefined ? {} : { skills: options.skill }),
    ...(options.requirement === undefined ? {} : { requirements: options.requirement }),
  };
}

/** `--setup-network` / `--no-setup-network`, else SKILLSMITH_SETUP_NETWORK, else auto. */
export function setupNetworkOf(
  flag: boolean | undefined,
  env: Readonly<Record<string, string | undefined>>,
): SetupNetworkChoice {
  if (flag === true) return "on";
  if (flag === false) return "off";
  const fromEnv = env.SKILLSMITH_SETUP_NETWORK;
  if (fromEnv === undefined || fromEnv === "") return "auto";
  if (fromEnv === "auto" || fromEnv === "on" || fromEnv === "off") return fromEnv;
  throw new UsageError(
    "cli.option-invalid",
    `SKILLSMITH_SETUP_NETWORK expects auto, on or off (got "${fromEnv}")`,
  );
}

/** `--weak-threshold`, else SKILLSMITH_WEAK_THRESHOLD, else the default (½). */
export function weakThresholdOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number {
  const text = flag ?? env.SKILLSMITH_WEAK_THRESHOLD;
  if (text === undefined || text === "") return DEFAULT_WEAK_THRESHOLD;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > 1) {
    throw new UsageError(
      "cli.option-invalid",
      `${flag === undefined ? "SKILLSMITH_WEAK_THRESHOLD" : "--weak-threshold"} expects a share of checks in (0, 1], e.g. 0.5 (got "${text}")`,
    );
  }
  return value;
}

/**
 * `--sandbox` (or `--unsafe-no-sandbox`, which wins): a kind of the sandbox registry — local,
 * container, unsafe, or one a program registered with `registerSandbox`.
 */
export function sandboxKindOf(options: {
  sandbox: string;
  unsafeNoSandbox?: boolean;
}): SandboxKind {
  const kind = options.unsafeNoSandbox === true ? "unsafe" : options.sandbox;
  if (!isSandboxKind(kind)) {
    throw new UsageError(
      "cli.option-invalid",
      `--sandbox expects ${sandboxKindList()} (got "${options.sandbox}")`,
    );
  }
  return kind;
}

/** `--sandbox`'s help: the registered kinds, `local (bubblewrap) | container | unsafe`. */
export function sandboxKindHelp(): string {
  return sandboxKinds()
    .map((kind) => (kind === "local" ? "local (bubblewrap)" : kind))
    .join(" | ");
}

/** The registered sandbox kinds as a sentence: `local, container or unsafe`. */
export function sandboxKindList(): string {
  const kinds = sandboxKinds();
  return kinds.length < 2
    ? kinds.join("")
    : `${kinds.slice(0, -1).join(", ")} or ${kinds[kinds.length - 1]}`;
}

/** A number in (0, below) — `below` itself excluded unless it is infinite. */
export function positiveReal(flag: string, below: number): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0 || parsed >= below) {
      throw new UsageError(
        "cli.option-invalid",
        `${flag} expects a number above 0${Number.isFinite(below) ? ` and below ${below}` : ""} (got "${value}")`,
      );
    }
    return parsed;
  };
}

/** `--repo <url|path>@<commit>`: split at the last `@` whose tail looks like a revision. */
export function parseRepoFlag(value: string): { repository: string; commit: string } {
  const at = value.lastIndexOf("@");
  const repository = at > 0 ? value.slice(0, at) : "";
  const commit = at > 0 ? value.slice(at + 1) : "";
  // `git@host:org/repo` has an `@` too: a revision never contains `/` or `:`.
  if (repository === "" || commit === "" || /[/:\s]/.test(commit)) {
    throw new UsageError(
      "cli.option-invalid",
      `--repo expects <url|path>@<commit> (e.g. ./repo@3f2c1ab), got "${value}"`,
    );
  }
  return { repository, commit };
}

/** `--agent`: one of the registered agent kinds. */
export function agentKindOf(text: string): AgentKind {
  if (!(AGENT_KINDS as readonly string[]).includes(text)) {
    throw new UsageError(
      "cli.option-invalid",
      `--agent expects one of ${AGENT_KINDS.join(", ")} (got "${text}")`,
    );
  }
  return text as AgentKind;
}

/** `--budget-usd`: a number of dollars ≥ 0, or no budget when the flag is absent. */
export function budgetUsdOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const budgetUsd = Number(text);
  if (!Number.isFinite(budgetUsd) || budgetUsd < 0) {
    throw new UsageError("cli.option-invalid", `--budget-usd expects a number ≥ 0 (got "${text}")`);
  }
  return budgetUsd;
}

/**
 * The repository half of `--repo`: a URL is passed on as written, anything else is a local path
 * resolved against the working directory.
 */
export function repositoryLocation(repository: string, cwd: string): string {
  const isLocal = !/^(https?|ssh|git|file):\/\/|^git@/.test(repository);
  return isLocal ? resolve(cwd, repository) : repository;
}

/** `--skill <id>` and `--requirement <id>` (both repeatable): which part of the suite to `verb`. */
export function withSelectionOptions(command: Command, verb: string): Command {
  return command
    .option("--skill <id>", `${verb} only this skill (repeatable)`, collect)
    .option(
      "--requirement <id>",
      `${verb} only this requirement: batch1, or skill/batch1 (repeatable)`,
      collect,
    );
}

/** `--setup-network` and `--no-setup-network`; read them with `setupNetworkOf`. */
export function withSetupNetworkOptions(command: Command): Command {
  return command
    .option(
      "--setup-network",
      "let setup use the network (default: when the package index answers)",
    )
    .option("--no-setup-network", "prepare environments offline, from what is already present");
}
