/**
 * The agent harnesses by name: a registry, not a switch, so a user can add their own harness
 * (`registerHarness("my-agent", factory)`) and name it in a suite configuration (`agent:
 * my-agent`) or on the command line of a program that registered it. The built-in harnesses are
 * registered here the same way, when this module loads.
 *
 * A registry is per copy of the package (two installs of skillsmith in one program have two); a
 * harness object itself is structural (`AgentHarnessV1`), so one made against any copy works.
 */
import { UsageError } from "../core/errors.js";
import type { ProviderName } from "../model/spec.js";
import type { BuiltinOptions } from "./builtin.js";
import { ClaudeCodeHarness, type ClaudeCodeOptions } from "./claude-code.js";
import { CodexHarness, type CodexOptions } from "./codex.js";
import {
  NoneHarness,
  OracleHarness,
  type OracleOptions,
  ReplayHarness,
  type ReplayOptions,
} from "./replay.js";
import type { AgentHarnessV1, AgentRunRequest } from "./types.js";

/** The harnesses that ship with skillsmith, in the order they are listed. */
export const BUILTIN_HARNESS_NAMES = [
  "claude-code",
  "codex",
  "builtin",
  "replay",
  "none",
  "oracle",
] as const;

export type BuiltinHarnessName = (typeof BUILTIN_HARNESS_NAMES)[number];

/** The built-in names; kept for callers written before the registry (same list). */
export const HARNESS_NAMES = BUILTIN_HARNESS_NAMES;
export type HarnessName = BuiltinHarnessName;

export interface HarnessOptionsByName {
  "claude-code": ClaudeCodeOptions;
  codex: CodexOptions;
  builtin: BuiltinOptions;
  replay: ReplayOptions;
  none: Record<string, never>;
  oracle: OracleOptions;
}

/**
 * Builds a harness. `options` is what the caller of `createHarness` passed (the runner passes
 * none for registered harnesses: a harness gets its model, limits and sandbox with each run).
 * Throw a `UsageError` for options that cannot work.
 *
 * @experimental The factory's signature may gain a context argument before 1.0.
 */
export type HarnessFactory<Options = unknown> = (options: Options | undefined) => AgentHarnessV1;

/** The environment variables an agent's model client reads: its base URL and its key. */
export interface KeyVariables {
  readonly baseUrl: string;
  readonly apiKey: string;
}

/**
 * What the run path needs to know about a harness, told by its registration instead of being
 * known by name: a harness registered by a user is priced, given an endpoint and versioned by
 * these, exactly as the built-in ones are.
 *
 * @experimental
 */
export interface HarnessFacts {
  /** The model spec a configuration without `model:` runs with (`anthropic:claude-sonnet-4-5`). */
  readonly defaultModel?: string;
  /**
   * Whose price list prices the tokens it reports without a cost, for a model spec naming no
   * provider. Absent: such tokens stay unpriced unless the spec names its provider.
   */
  readonly pricingProvider?: ProviderName;
  /**
   * The variables of its model client for a model spec: where the run's endpoint and key come
   * from. Absent: the harness talks to no model endpoint (replay, oracle).
   */
  readonly keyVariables?: (modelSpec: string | undefined) => KeyVariables;
  /** The CLI whose `<binary> --version` is recorded in the manifest and the run's fingerprint. */
  readonly versionCommand?: { readonly binary: string; readonly args: readonly string[] };
  /**
   * Where it reads a project's skills, relative to the working directory (`/`-separated, no `..`).
   * The run path installs the skills under test into the first, in the arms that have them, and
   * removes them again before the agent's change is captured.
   */
  readonly skillFolders?: readonly string[];
  /** Its factory takes the run's price overrides (`{ prices }`): it prices its own tokens. */
  readonly takesPrices?: boolean;
  /**
   * A control, not an agent: it never reads a skill, so its runs check the task (the oracle must
   * reach `expectedScore` 1, the untouched working directory 0) and never give a skill a verdict.
   * Reports show its runs as controls. Absent: an agent whose arms are compared.
   */
  readonly control?: {
    readonly expectedScore: 0 | 1;
    /**
     * The control leaves the working directory untouched: it must score what the verifier check
     * measured on the untouched repository (a pass-ratio verifier may pass some checks there),
     * and `expectedScore` only where the check measured nothing (an environment-only task).
     */
    readonly untouched?: boolean;
    /** What meeting the expectation says, for a report ("the reference solution passes"). */
    readonly means: string;
  };
}

export interface RegisterOptions {
  /** Replace a harness already registered under this name (built-ins included). Default false. */
  readonly replace?: boolean;
  /** What the run path asks of this harness (see `HarnessFacts`). */
  readonly facts?: HarnessFacts;
}

/** Same rule as suite ids, since a harness name is written in a suite's `agent:` field. */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const factories = new Map<string, HarnessFactory>();
const factsByName = new Map<string, HarnessFacts>();

/**
 * Register a harness under `name`, so `createHarness(name)`, suites (`agent: name`) and
 * `runSuite` find it. A name already registered is refused unless `replace` is set, so two
 * plugins cannot silently take each other's name.
 *
 * @experimental
 */
export function registerHarness<Options = unknown>(
  name: string,
  factory: HarnessFactory<Options>,
  options: RegisterOptions = {},
): void {
  if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
    throw new UsageError(
      "agents.harness-name-invalid",
      `harness name ${JSON.stringify(name)} is not valid: use letters, digits, '.', '_' or '-', starting with a letter or digit (at most 128 characters)`,
    );
  }
  if (typeof factory !== "function") {
    throw new UsageError(
      "agents.harness-factory-invalid",
      `registerHarness("${name}", factory): the factory must be a function returning a harness`,
    );
  }
  if (factories.has(name) && options.replace !== true) {
    throw new UsageError(
      "agents.harness-name-taken",
      `a harness named "${name}" is already registered; pass { replace: true } to replace it`,
    );
  }
  checkSkillFolders(name, options.facts?.skillFolders);
  factories.set(name, factory as HarnessFactory);
  factsByName.set(name, options.facts ?? {});
}

/**
 * A registration's skill folders must stay inside the workspace: relative, `/`-separated, no
 * empty, `.` or `..` part (the installer checks again, after resolving links, at install time).
 */
function checkSkillFolders(name: string, folders: readonly string[] | undefined): void {
  for (const folder of folders ?? []) {
    const parts = typeof folder === "string" ? folder.split("/") : [""];
    if (parts.some((part) => part === "" || part === "." || part === ".." || part.includes("\\"))) {
      throw new UsageError(
        "agents.harness-skill-folder-invalid",
        `registerHarness("${name}"): skill folder ${JSON.stringify(folder)} must be a relative path inside the workspace, "/"-separated, with no empty, "." or ".." part`,
      );
    }
  }
}

/** What the registration of `name` tells about it; nothing for a name not registered. */
export function harnessFacts(name: string): HarnessFacts {
  return factsByName.get(name) ?? {};
}

/**
 * Every folder a registered harness reads a project's skills from (its `skillFolders`), sorted:
 * preparing a repository clears them all, so the repository's own skills for any of them never
 * reach an arm that runs without skills.
 */
export function registeredSkillFolders(): string[] {
  const folders = [...factsByName.values()].flatMap((facts) => facts.skillFolders ?? []);
  return [...new Set(folders)].sort();
}

/**
 * Remove a harness registered by `registerHarness`; true when there was one. Built-in harnesses
 * cannot be removed (replace them instead).
 *
 * @experimental
 */
export function unregisterHarness(name: string): boolean {
  if ((BUILTIN_HARNESS_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(
      "agents.harness-builtin",
      `the built-in harness "${name}" cannot be unregistered; register a replacement with { replace: true }`,
    );
  }
  factsByName.delete(name);
  return factories.delete(name);
}

/** Every registered harness name: the built-ins first, then the others in registration order. */
export function harnessNames(): string[] {
  return [...factories.keys()];
}

/** Whether a harness is registered under `name`. */
export function isHarnessName(name: string): boolean {
  return factories.has(name);
}

/** Creates a harness by name; replay and oracle need their options (where answers come from). */
export function createHarness<Name extends BuiltinHarnessName>(
  name: Name,
  ...options: Name extends "replay" | "oracle"
    ? [HarnessOptionsByName[Name]]
    : [HarnessOptionsByName[Name]?]
): AgentHarnessV1;
export function createHarness(name: string, options?: unknown): AgentHarnessV1;
export function createHarness(name: string, options?: unknown): AgentHarnessV1 {
  const factory = factories.get(name);
  if (factory === undefined) {
    throw new UsageError(
      "agents.harness-unknown",
      `unknown agent harness "${name}"; expected one of: ${harnessNames().join(", ")} (or register one with registerHarness)`,
    );
  }
  const harness = factory(options);
  if (
    typeof harness !== "object" ||
    harness === null ||
    harness.specificationVersion !== "v1" ||
    typeof harness.run !== "function"
  ) {
    throw new UsageError(
      "agents.harness-factory-invalid",
      `the factory registered for "${name}" did not return an AgentHarnessV1 (specificationVersion "v1" and a run method)`,
    );
  }
  return harness;
}

function requireOptions<Options>(name: "replay" | "oracle", options: Options | undefined): Options {
  if (options === undefined) {
    throw new UsageError(
      "agents.harness-options-missing",
      `the ${name} harness needs ${name === "replay" ? "recorded patches" : "reference solutions"}`,
    );
  }
  return options;
}

/**
 * The builtin agent, built on first run: its module loads the AI SDK, which importing
 * skillsmith (or creating any other harness) should not pay for.
 */
function lazyBuiltinHarness(options: BuiltinOptions | undefined): AgentHarnessV1 {
  let harness: Promise<AgentHarnessV1> | undefined;
  return {
    specificationVersion: "v1",
    name: "builtin",
    run(request: AgentRunRequest): ReturnType<AgentHarnessV1["run"]> {
      harness ??= import("./builtin.js").then((module) => new module.BuiltinHarness(options));
      return harness.then((loaded) => loaded.run(request));
    },
  };
}

const ANTHROPIC_VARIABLES: KeyVariables = {
  baseUrl: "ANTHROPIC_BASE_URL",
  apiKey: "ANTHROPIC_API_KEY",
};
const OPENAI_VARIABLES: KeyVariables = { baseUrl: "OPENAI_BASE_URL", apiKey: "OPENAI_API_KEY" };

registerHarness<ClaudeCodeOptions>("claude-code", (options) => new ClaudeCodeHarness(options), {
  facts: {
    defaultModel: "anthropic:claude-sonnet-4-5",
    pricingProvider: "anthropic",
    keyVariables: () => ANTHROPIC_VARIABLES,
    versionCommand: { binary: "claude", args: ["--version"] },
    skillFolders: [".claude/skills"],
  },
});
registerHarness<CodexOptions>("codex", (options) => new CodexHarness(options), {
  facts: {
    defaultModel: "openai:gpt-5",
    pricingProvider: "openai",
    keyVariables: () => OPENAI_VARIABLES,
    versionCommand: { binary: "codex", args: ["--version"] },
    skillFolders: [".agents/skills"],
    // Codex reports tokens only: it prices them with the run's price overrides.
    takesPrices: true,
  },
});
registerHarness<BuiltinOptions>("builtin", lazyBuiltinHarness, {
  facts: {
    pricingProvider: "openai",
    // The AI SDK client of the model's provider.
    keyVariables: (spec) =>
      spec?.startsWith("anthropic:") ? ANTHROPIC_VARIABLES : OPENAI_VARIABLES,
  },
});
registerHarness<ReplayOptions>(
  "replay",
  (options) => new ReplayHarness(requireOptions("replay", options)),
);
registerHarness("none", () => new NoneHarness(), {
  facts: {
    control: {
      expectedScore: 0,
      untouched: true,
      means: "the untouched working directory must not pass the verifier",
    },
  },
});
registerHarness<OracleOptions>(
  "oracle",
  (options) => new OracleHarness(requireOptions("oracle", options)),
  {
    facts: {
      control: { expectedScore: 1, means: "the reference solution must pass the verifier" },
    },
  },
);
