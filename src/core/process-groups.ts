/**
 * The process groups skillsmith started, apart from `process.ts` so that the CLI's exit handler
 * (`cli/interrupt.ts`, installed by every command) does not load `child_process` for a command
 * that starts nothing.
 */
/** The process groups `runProcess` started that are still running. */
export const liveGroups = new Set<number>();

/**
 * Kill every process group `runProcess` started that is still running. Children run in their own
 * groups (so a timeout can kill a whole tree) and would survive their parent otherwise; the CLI
 * calls this when it exits or is interrupted (`cli/interrupt.ts`). Library code installs no
 * process-wide handlers itself: an embedding program decides what its signals do.
 */
export function killStartedProcessGroups(): void {
  for (const group of liveGroups) killGroup(group, "SIGKILL");
}

export function killGroup(processGroup: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-processGroup, signal);
  } catch {
    // The group is already gone.
  }
}
