/** Skill evaluation: suites (load, validate) and importers of public benchmark layouts. */

export * from "./analysis/index.js";
export * from "./analysis/study.js";
export * from "./analysis/study-render.js";
export * from "./check/index.js";
export * from "./generate/index.js";
export type {
  ImportProblem,
  ImportResult,
} from "./import/common.js";
export {
  DISTRACTOR_ARM,
  dockerfileWorkdir,
  type HarborImportOptions,
  importHarbor,
  withoutSkillCopies,
} from "./import/harbor.js";
export {
  importSweSkillsBench,
  STUDY_CONFIGURATIONS,
  STUDY_PROTOCOL,
  type SweSkillsBenchImportOptions,
  testFileName,
} from "./import/swe-skills-bench.js";
export { parseToml, TomlSyntaxError, type TomlTable, type TomlValue } from "./import/toml.js";
export * from "./queue/index.js";
export * from "./review/index.js";
export * from "./run/index.js";
export * from "./store/index.js";
export { checkArmSkillNames, withDistractors } from "./suite/distractors.js";
export * from "./suite/estimate.js";
export * from "./suite/layout.js";
export {
  formatSuiteProblem,
  type LoadedSuite,
  type LoadSuiteOptions,
  loadSuite,
  loadSuiteSelection,
  repositoryName,
  type SuiteSelection,
  type ValidateSuiteOptions,
  validateSuite,
} from "./suite/load.js";
export {
  type ParsedRequirement,
  parseRequirementMarkdown,
  type Requirement,
  type RequirementField,
  type RequirementProblem,
} from "./suite/requirement.js";
export {
  AGENT_KINDS,
  type AgentKind,
  type AgentLimits,
  type Configuration,
  type ConfigurationLimits,
  type EnvironmentSpec,
  type RepositorySpec,
  type SkillFile,
  SUITE_FORMAT,
  type SuiteFile,
  type SuiteProtocol,
  type VerifierFile,
} from "./suite/schema.js";
export type {
  ExcludedPart,
  ReferenceSolution,
  RepositorySource,
  Suite,
  SuiteEnvironment,
  SuiteProblem,
  SuiteRepository,
  SuiteRequirement,
  SuiteSkill,
  SuiteValidation,
  SuiteVerifier,
} from "./suite/types.js";
export {
  isVariantName,
  parseVariantOption,
  parseVariantOptions,
  type VariantOption,
  variantNames,
  withVariants,
} from "./suite/variants.js";
