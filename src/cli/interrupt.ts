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

/**
 * Resolves with the signal's name at the first SIGINT or SIGTERM, then stops listening: how a
 * long-running command (an MCP server, the dashboard, the scripted model server) waits until it
 * is asked to stop.
 */
export function waitForTerminationSignal(): Promise<string> {
  return new Promise((done) => {
    const stop = (signal: string) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
