/**
 * What a Harbor `task.toml` says, field by field: each field Harbor defines is either honoured
 * (mapped into the suite) or named as ignored with the reason, so nothing a task author wrote is
 * dropped without a word. Keys Harbor does not define are reported as unknown.
 */
import type { TomlTable } from "./toml.js";

type Table = Record<string, unknown>;

/** A TOML table's value as a record; anything else (absent, a scalar, a list) as empty. */
export function table(value: unknown): Table {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Table)
    : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The schema versions this reading follows (Harbor's task.toml 1.x). */
const KNOWN_SCHEMA_MAJOR = "1";

/**
 * Harbor's fields that skillsmith does not carry out, with why. Each is reported when a task
 * sets it; a field set to its neutral value (false, 0, empty) changes nothing and is not.
 */
const IGNORED: Readonly<Record<string, string>> = {
  "environment.storage_mb": "no disk limit is applied here",
  "environment.storage": "no disk limit is applied here",
  "environment.gpus": "no GPU is given to task containers here",
  "environment.gpu_types": "no GPU is given to task containers here",
  "environment.mcp_servers": "MCP servers of a task are not started",
  "environment.env": "the task's environment variables are not set in the agent's container",
  "environment.skills_dir":
    "skills are installed per arm by skillsmith (with-skill arm only), not from the image",
  "solution.env": "the reference solution runs without the task's solution environment variables",
  "verifier.env":
    "values that name host variables (a dollar sign and braces) are not forwarded to test.sh",
  source: "kept in skill.yaml source only",
};

/** Harbor's fields that are honoured; every other key is unknown to Harbor itself. */
const HONOURED = new Set([
  "version",
  "schema_version",
  "metadata",
  "task",
  "agent",
  "agent.timeout_sec",
  "agent.user",
  "verifier",
  "verifier.timeout_sec",
  "verifier.user",
  "verifier.env",
  "environment",
  "environment.docker_image",
  "environment.build_timeout_sec",
  "environment.cpus",
  "environment.memory_mb",
  "environment.memory",
  "environment.allow_internet",
  "solution",
]);

export interface HarborTaskSettings {
  /** `[task] name` (a registry name such as `org/task`), when given. */
  readonly name?: string;
  readonly schemaVersion?: string;
  readonly agentUser?: string;
  readonly verifierUser?: string;
  /** `[verifier] env` with literal values only, passed to test.sh. */
  readonly verifierEnv: Readonly<Record<string, string>>;
  /** `field = value: reason` for every field set but not carried out. */
  readonly ignored: readonly string[];
}

function neutral(value: unknown): boolean {
  if (value === false || value === 0 || value === "" || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value as object).length === 0;
  return false;
}

function shown(value: unknown): string {
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/** Read the fields of `config` that decide how the task runs, and list the ignored ones. */
export function readHarborSettings(config: TomlTable): HarborTaskSettings {
  const ignored: string[] = [];
  const verifierEnv: Record<string, string> = {};
  const schemaVersion = text(config.schema_version) ?? text(config.version);
  if (schemaVersion !== undefined && schemaVersion.split(".")[0] !== KNOWN_SCHEMA_MAJOR) {
    ignored.push(
      `schema_version = ${shown(schemaVersion)}: newer than the task.toml 1.x this importer reads; fields it does not know are listed here`,
    );
  }
  const sections = ["metadata", "task", "agent", "verifier", "environment", "solution"];
  for (const [key, value] of Object.entries(config)) {
    if (sections.includes(key) && typeof value === "object" && !Array.isArray(value)) {
      for (const [field, inner] of Object.entries(table(value))) {
        if (key === "metadata" || key === "task") continue;
        const path = `${key}.${field}`;
        if (path === "verifier.env") {
          for (const [name, setting] of Object.entries(table(inner))) {
            if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
              ignored.push(`[verifier] env.${name}: not a variable name a shell accepts`);
            } else if (typeof setting === "string" && !setting.includes("${")) {
              verifierEnv[name] = setting;
            } else {
              ignored.push(`[verifier] env.${name} = ${shown(setting)}: ${IGNORED[path]}`);
            }
          }
          continue;
        }
        const reason =
          IGNORED[path] ?? (HONOURED.has(path) ? undefined : "not a field Harbor defines");
        if (reason !== undefined && !neutral(inner)) {
          ignored.push(`[${key}] ${field} = ${shown(inner)}: ${reason}`);
        }
      }
      continue;
    }
    const reason = IGNORED[key] ?? (HONOURED.has(key) ? undefined : "not a field Harbor defines");
    if (reason !== undefined && !neutral(value))
      ignored.push(`${key} = ${shown(value)}: ${reason}`);
  }
  const name = text(table(config.task).name);
  const agentUser = text(table(config.agent).user);
  const verifierUser = text(table(config.verifier).user);
  return {
    ...(name === undefined ? {} : { name }),
    ...(schemaVersion === undefined ? {} : { schemaVersion }),
    ...(agentUser === undefined ? {} : { agentUser }),
    ...(verifierUser === undefined ? {} : { verifierUser }),
    verifierEnv,
    ignored,
  };
}

/** `NAME='value' ...` for a shell command line: each value single-quoted. */
export function environmentPrefix(variables: Readonly<Record<string, string>>): string {
  return Object.entries(variables)
    .map(([name, value]) => `${name}='${value.replaceAll("'", `'"'"'`)}' `)
    .join("");
}
