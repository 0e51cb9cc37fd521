/** Text of `bench check-tasks`: a line per task requirement, its decisive lines, a summary. */
import type { TaskCheck } from "./tasks.js";

function ratio(value: number | undefined): string {
  return value === undefined ? "-" : String(Math.round(value * 1000) / 1000);
}

/** One progress line (also the first line of each task in the final text). */
export function taskCheckLine(check: TaskCheck): string {
  const label = check.ok ? "ok  " : check.status === "environment-failure" ? "ENV " : "FAIL";
  const controls =
    check.status === "environment-failure" ||
    (check.oracle === undefined && check.untouched === undefined)
      ? "not run"
      : `oracle ${ratio(check.oracle?.passRatio)}, untouched ${ratio(check.untouched?.passRatio)}`;
  return `${label} ${check.skill}/${check.requirement}: ${controls}${check.fault === undefined ? "" : ` [fault: ${check.fault}]`}${check.cached === true ? " [cached]" : ""}`;
}

export function renderTaskChecks(checks: readonly TaskCheck[]): string[] {
  if (checks.length === 0) return ["no environment-only tasks in this suite (or the selection)"];
  const lines: string[] = [];
  for (const check of checks) {
    lines.push(taskCheckLine(check));
    for (const problem of check.problems) lines.push(`     - ${problem}`);
    for (const [name, control] of [
      ["oracle", check.oracle],
      ["untouched", check.untouched],
    ] as const) {
      if (!check.ok && control?.runFile !== undefined) {
        lines.push(`     ${name} run: ${control.runFile}`);
      }
    }
  }
  lines.push("", taskCheckSummary(checks));
  return lines;
}

export function taskCheckSummary(checks: readonly TaskCheck[]): string {
  const ok = checks.filter((check) => check.ok).length;
  const environment = checks.filter((check) => check.status === "environment-failure").length;
  const broken = checks.length - ok - environment;
  const faults = new Map<string, number>();
  for (const check of checks) {
    if (check.fault !== undefined) faults.set(check.fault, (faults.get(check.fault) ?? 0) + 1);
  }
  return `${checks.length} task requirement(s): ${ok} ok, ${broken} broken, ${environment} environment-failure${faults.size === 0 ? "" : ` (fault: ${[...faults].map(([fault, count]) => `${fault} ${count}`).join(", ")})`}`;
}
