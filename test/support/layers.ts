import { ERROR_CODE_MODULES } from "../../src/core/errors.js";

/**
 * The import direction of ARCHITECTURE.md: each module and the modules it may import from.
 * `architecture.test.ts` enforces it on imports, `error-codes.test.ts` on the error codes a
 * module throws (its own or a lower module's). The root entry may import every module but the
 * CLI; the module list is core's (one list, not a copy).
 */
export const MODULE_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  core: [],
  skill: ["core"],
  stats: ["core"],
  model: ["core", "skill", "stats"],
  env: ["core", "skill", "stats", "model"],
  agents: ["core", "skill", "stats", "model", "env"],
  bench: ["core", "skill", "stats", "model", "env", "agents"],
  wiki: ["core", "skill", "stats", "model", "env", "agents"],
  synth: ["core", "skill", "stats", "model", "env", "agents", "bench"],
  report: ["core", "skill", "stats", "model", "env", "agents", "bench", "wiki", "synth"],
  cli: ["core", "skill", "stats", "model", "env", "agents", "bench", "wiki", "synth", "report"],
  // The package's root entry (`import … from "skillsmith"`), the one file directly under src/.
  "index.ts": ERROR_CODE_MODULES.filter((module) => module !== "cli"),
};
