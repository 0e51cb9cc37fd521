/** `bench generate`: requirements and verifiers written by models, checked deterministically. */
export {
  type GeneratedRequirement,
  inspectTestFile,
  longestSharedWordRun,
  normaliseText,
  pythonCompileFinding,
  RESTATEMENT_WORD_RUN,
  requirementFindings,
  type TestFileCheck,
} from "./checks.js";
export {
  type GeneratedVerifierSummary,
  type GenerateSuiteOptions,
  type GenerateSuiteResult,
  generateSuite,
  REQUIREMENT_ENGINEER_ROLE,
  renderRequirementMarkdown,
  TEST_ENGINEER_ROLE,
} from "./generate.js";
export { benchPromptText, fillBenchPrompt, GENERATION_PROMPT_VERSION } from "./prompts.js";
export { describeRepository, type RepositoryMetadata } from "./repository.js";
