import { killStartedProcessGroups } from "../core/process-groups.js";

let installed = false;
/** Who takes the first SIGINT instead of ending the process (`interruptGracefully`). */
let graceful: (() => void) | undefined;

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
    const stop = () => {
      killStartedProcessGroups();
      const handler = graceful;
      if (signal === "SIGINT" && handler !== undefined) {
        // The command stops on its own and says what it kept; a second Ctrl-C ends it at once.
        graceful = undefined;
        process.once(signal, stop);
        handler();
        return;
      }
      process.kill(process.pid, signal);
    };
    process.once(signal, stop);
  }
}

/**
 * Let the first Ctrl-C stop a long command gracefully: its children are killed as always, then
 * `handler` runs (it aborts the command's work, which then reports what it kept) instead of the
 * process ending; a second Ctrl-C ends the process. Returns the function that gives it back.
 */
export function interruptGracefully(handler: () => void): () => void {
  graceful = handler;
  return () => {
    if (graceful === handler) graceful = undefined;
  };
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
