import { killStartedProcessGroups } from "../core/process.js";

let installed = false;

/**
 * The CLI's process-wide clean-up: when skillsmith exits or is interrupted (Ctrl-C, SIGTERM,
 * SIGHUP), kill every process group it started, so no agent, verifier or sandbox outlives it.
 * A signal is then raised again: with no other listener the default action ends the process with
 * the status that says it was signalled; commands with their own listener (view, worker) still
 * get it and stop cleanly.
 */
export function killChildrenOnExit(): void {
  if (installed) return;
  installed = true;
  process.once("exit", killStartedProcessGroups);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killStartedProcessGroups();
      process.kill(process.pid, signal);
    });
  }
}
