/**
 * A model per synthesis role (protocol C: a fixed solver, a synthesiser, a critic and an editor;
 * the paper runs a small solver beside a larger synthesiser). Each role's model spec is resolved
 * flag > environment > config file > the run's `--model`, and where it came from is recorded.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import type { ModelClient } from "../model/index.js";
import { configFileName } from "../model/index.js";

export const modelRoles = ["solver", "synthesiser", "critic", "editor"] as const;
export type ModelRole = (typeof modelRoles)[number];

/** Clients per role; a role left out uses the run's model. */
export type RoleModels = Partial<Record<ModelRole, ModelClient>>;

/** The command-line flag of each role. */
export const roleFlags: Readonly<Record<ModelRole, string>> = {
  solver: "--solver-model",
  synthesiser: "--synth-model",
  critic: "--critic-model",
  editor: "--editor-model",
};

/** The environment variable of each role. */
export const roleVariables: Readonly<Record<ModelRole, string>> = {
  solver: "SKILLSMITH_SOLVER_MODEL",
  synthesiser: "SKILLSMITH_SYNTH_MODEL",
  critic: "SKILLSMITH_CRITIC_MODEL",
  editor: "SKILLSMITH_EDITOR_MODEL",
};

/** The config file's section: `"synthModels": {"solver": "<provider>:<model>", …}`. */
export const ROLE_CONFIG_SECTION = "synthModels";

export interface RoleModelChoice {
  readonly spec: string;
  readonly from: "flag" | "environment" | "config" | "default";
}

export type RoleModelChoices = Readonly<Record<ModelRole, RoleModelChoice>>;

const sectionSchema = z.strictObject(
  Object.fromEntries(modelRoles.map((role) => [role, z.string().min(1).optional()])) as Record<
    ModelRole,
    z.ZodOptional<z.ZodString>
  >,
);

function fromConfig(source: {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}): Partial<Record<ModelRole, string>> {
  const path = resolve(source.cwd, source.env.SKILLSMITH_CONFIG ?? configFileName);
  if (!existsSync(path)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputError("model.config-syntax", "not valid JSON", { file: path }, { cause });
  }
  const parsed = parseInput(
    z.looseObject({ [ROLE_CONFIG_SECTION]: sectionSchema.optional() }),
    value,
    {
      code: "model.config-invalid",
      location: { file: path },
      describe: (problem) =>
        `${problem.message} (expected "${ROLE_CONFIG_SECTION}": {${modelRoles.map((role) => `"${role}"?: "<provider>:<model>"`).join(", ")}})`,
    },
  );
  return (parsed[ROLE_CONFIG_SECTION] ?? {}) as Partial<Record<ModelRole, string>>;
}

/** Every role's model: its flag, else its environment variable, else the config, else `--model`. */
export function resolveRoleModels(
  flags: Partial<Record<ModelRole, string | undefined>>,
  defaultSpec: string,
  source: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
): RoleModelChoices {
  const configured = fromConfig(source);
  const given = (value: string | undefined) =>
    value !== undefined && value.trim() !== "" ? value.trim() : undefined;
  const choose = (role: ModelRole): RoleModelChoice => {
    const flag = given(flags[role]);
    if (flag !== undefined) return { spec: flag, from: "flag" };
    const environment = given(source.env[roleVariables[role]]);
    if (environment !== undefined) return { spec: environment, from: "environment" };
    const config = given(configured[role]);
    if (config !== undefined) return { spec: config, from: "config" };
    return { spec: defaultSpec, from: "default" };
  };
  return Object.fromEntries(modelRoles.map((role) => [role, choose(role)])) as Record<
    ModelRole,
    RoleModelChoice
  >;
}
