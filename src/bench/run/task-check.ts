/**
 * The task controls of environment-only (Harbor) tasks live in `../check/tasks.ts` with the other
 * checks; re-exported here so the gate and public API keep their import.
 */
export {
  type CheckTasksOptions,
  checkTasks,
  excludedTaskChecks,
  type TaskCheck,
  type TaskCheckStatus,
  type TaskControl,
  type TaskFault,
} from "../check/tasks.js";
