/**
 * `skillsmith/synth` (experimental as a whole, see the README): test-time skill synthesis of
 * protocol C. Task families, the trajectory pool, retrieval, per-task SKILL.md synthesis against
 * the baselines with cost accounting, and bounded, audited optimisation of the synthesis prompt.
 *
 * @packageDocumentation
 */
export { type BuildPoolOptions, type BuildPoolResult, buildPool } from "./build-pool.js";
export { type BuiltinFamilyOptions, BuiltinTaskFamily } from "./builtin.js";
export type { FamilyTask, Split, TaskFamilyV1, VisibleTask } from "./family.js";
export { type OptimiseOptions, type OptimiseReport, optimiseLibrary } from "./optimise.js";
export { type PoolEntry, readPool } from "./pool.js";
export {
  type ComparisonReport,
  compareMethods,
  type Method,
  methods,
  renderComparison,
  runMethod,
} from "./run.js";
export type { SlotLibrary } from "./slots.js";
export { initialLibrary, LibraryStore } from "./store.js";
export { type SuiteFamilyOptions, SuiteTaskFamily } from "./suite-family.js";
export { type SynthesisResult, synthesiseSkill } from "./synthesise.js";
