/**
 * Failing checks that fail only because a tool is missing on this machine: a verifier that
 * calls `go` or `kustomize` fails those checks whatever the agent wrote, so its row says so
 * ("ok, 3 checks need go") instead of letting the pass ratio pass for a measurement of the
 * agent. A check counts for a tool when its failure message says the program was not found
 * (`FileNotFoundError … 'go'`, `go: not found`, `command not found: go`, `No module named
 * 'pdm'`, "kustomize not installed"); the tools looked for are those the verifier starts that
 * are not on PATH (`missingVerifierTools`) and any program a failure says was not found.
 */
import { findOnPath } from "../../env/index.js";

/** A failing check of a measurement, its message capped. */
export interface FailedCheck {
  readonly name: string;
  readonly message: string;
}

export interface ToolNeed {
  readonly tool: string;
  /** Failing checks whose failure is that tool's absence. */
  readonly checks: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The missing tool a failure message blames, if any. */
function toolBlamed(
  message: string,
  tools: readonly string[],
  path: string | undefined,
): string | undefined {
  // Any program subprocess could not start, when it is not on PATH here either.
  const started =
    /No such file or directory: '([\w+-]+)'/.exec(message)?.[1] ??
    /(?:^|\s)([\w+-]+): (?:command )?not found/m.exec(message)?.[1] ??
    /command not found: ([\w+-]+)/.exec(message)?.[1];
  if (started !== undefined && (tools.includes(started) || findOnPath(started, path) === null)) {
    return started;
  }
  return tools.find((tool) =>
    new RegExp(
      `No module named '${escapeRegExp(tool)}'|\\b${escapeRegExp(tool)}\\b[^\\n]{0,40}\\b(?:is )?not (?:installed|available|found)|\\b${escapeRegExp(tool)} (?:cannot be imported|is missing)`,
      "i",
    ).test(message),
  );
}

/**
 * The tools the failing checks need, when every failing check fails for a missing tool; empty
 * when any fails for another reason (then the row's figures are the verifier's own).
 */
export function toolNeeds(
  failures: readonly FailedCheck[],
  tools: readonly string[],
  path: string | undefined = process.env.PATH,
): ToolNeed[] {
  if (failures.length === 0) return [];
  const counts = new Map<string, number>();
  for (const failure of failures) {
    const tool = toolBlamed(failure.message, tools, path);
    if (tool === undefined) return [];
    counts.set(tool, (counts.get(tool) ?? 0) + 1);
  }
  return [...counts].map(([tool, checks]) => ({ tool, checks }));
}

/** `3 checks need go, 1 check needs kustomize`. */
export function describeToolNeeds(needs: readonly ToolNeed[]): string {
  return needs
    .map((need) => `${need.checks} check${need.checks === 1 ? " needs" : "s need"} ${need.tool}`)
    .join(", ");
}
