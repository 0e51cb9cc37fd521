/**
 * Which embedding model a retrieval step uses. One resolution for every caller (wiki search,
 * synthesis retrieval), each reading its own section of the config file:
 * flag > `SKILLSMITH_EMBEDDING_MODEL` > `"<section>": {"embeddingModel": ...}` in
 * `skillsmith.config.json` (or the file `SKILLSMITH_CONFIG` names) > none.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import { configFileName } from "./config.js";
import { EMBEDDING_MODEL_VARIABLE } from "./embedding-variable.js";

export { EMBEDDING_MODEL_VARIABLE };

export interface EmbeddingModelChoice {
  readonly spec: string;
  readonly from: "flag" | "environment" | "config";
}

interface ConfigLocation {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** `<section>.embeddingModel` of the config file, when the file and the field exist. */
export function embeddingModelFromConfig(
  section: string,
  source: ConfigLocation,
): string | undefined {
  const path = resolve(source.cwd, source.env.SKILLSMITH_CONFIG ?? configFileName);
  // A missing file named by SKILLSMITH_CONFIG is reported by the model settings, which read it too.
  if (!existsSync(path)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputError("model.config-syntax", "not valid JSON", { file: path }, { cause });
  }
  const schema = z.looseObject({
    [section]: z.strictObject({ embeddingModel: z.string().min(1).optional() }).optional(),
  });
  const parsed = parseInput(schema, value, {
    code: "model.config-invalid",
    location: { file: path },
    describe: (problem) =>
      `${problem.message} (expected "${section}": {"embeddingModel": "<provider>:<model>"})`,
  });
  const found = parsed[section] as { embeddingModel?: string } | undefined;
  return found?.embeddingModel;
}

/** The embedding model and where the choice came from; undefined when none is configured. */
export function resolveEmbeddingModel(
  flag: string | undefined,
  section: string,
  source: ConfigLocation,
): EmbeddingModelChoice | undefined {
  if (flag !== undefined && flag.trim() !== "") return { spec: flag, from: "flag" };
  const fromEnvironment = source.env[EMBEDDING_MODEL_VARIABLE];
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== "")
    return { spec: fromEnvironment, from: "environment" };
  const fromConfig = embeddingModelFromConfig(section, source);
  return fromConfig === undefined ? undefined : { spec: fromConfig, from: "config" };
}
