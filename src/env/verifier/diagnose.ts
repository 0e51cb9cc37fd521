/**
 * Why a verifier crashed before checking anything: because the deliverable it imports is not
 * there (the requirement asks the agent to create or change that module — on the untouched
 * repository, and for an agent that did not deliver, the verifier fails exactly as it should),
 * or for a reason of its own (a helper module left behind, a pytest plugin or third-party package
 * missing from the environment, a syntax error in the test file) — a broken verifier, which
 * measures nothing.
 *
 * Evidence, strongest first: the module or file the error names maps to a path in the
 * requirement's File Operations (`src/pkg/mod.py` ↔ `pkg.mod`, `mod`, and the packages above it),
 * or a traceback frame lies in such a file (the agent's module exists but does not load); else
 * the requirement's text names the module's file or dotted name as something to write. Anything
 * else is the verifier's own problem.
 */

export interface CollectionDiagnosis {
  /** `deliverable-missing`: failing as it should; `broken`: the verifier's own problem. */
  readonly kind: "deliverable-missing" | "broken";
  /** One sentence for a person, naming the module or file and the evidence. */
  readonly reason: string;
  /** The error line the diagnosis rests on. */
  readonly evidence?: string;
}

export interface DiagnoseInput {
  /** The verifier's combined output (pytest's collection errors and tracebacks). */
  readonly output: string;
  /** The requirement's File Operations (repository-relative paths). */
  readonly fileOperations: readonly string[];
  /** The requirement's whole text, for modules it names without listing them as files. */
  readonly requirementText?: string;
  /** Where the repository is inside the sandbox (`/workspace/<name>`). */
  readonly workspaceMountPath?: string;
}

/** A Python-ish dotted module name. */
const moduleName = /^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/;

/** Module names a repository-relative path can be imported as, longest first. */
export function moduleNamesOf(path: string): string[] {
  const clean = path
    .replace(/^\.?\//, "")
    .replace(/\/+$/, "")
    .replace(/\.py$/, "")
    .replace(/\/__init__$/, "");
  const parts = clean.split("/").filter((part) => part !== "");
  if (parts.length === 0 || parts.some((part) => !/^[A-Za-z_]\w*$/.test(part))) return [];
  const names: string[] = [];
  // Any suffix: the importing test may have put any parent folder on sys.path (a src layout,
  // `sys.path.insert(0, "<repo>/scripts")`, the repository root).
  for (let start = 0; start < parts.length; start += 1) names.push(parts.slice(start).join("."));
  return names;
}

function explainsModule(missing: string, deliverables: readonly string[]): string | undefined {
  for (const path of deliverables) {
    for (const name of moduleNamesOf(path)) {
      // The module itself, a package above it (created with it), or a module inside a package
      // the requirement creates.
      if (missing === name || name.startsWith(`${missing}.`) || missing.startsWith(`${name}.`)) {
        return path;
      }
    }
  }
  return undefined;
}

function namedInText(missing: string, text: string | undefined): boolean {
  if (text === undefined || text === "") return false;
  const asPath = missing.replace(/\./g, "/");
  const escaped = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return (
    new RegExp(`(^|[^\\w/])${escaped(asPath)}(\\.py|/)`).test(text) ||
    (missing.includes(".") && new RegExp(`(^|[^\\w.])${escaped(missing)}\\b`).test(text))
  );
}

function relativeToWorkspace(path: string, mountPath: string | undefined): string | undefined {
  if (mountPath === undefined) return undefined;
  const prefix = mountPath.endsWith("/") ? mountPath : `${mountPath}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
}

function pathIsDeliverable(
  relativePath: string,
  deliverables: readonly string[],
): string | undefined {
  const clean = relativePath.replace(/^\.?\//, "");
  return deliverables.find((path) => {
    const deliverable = path.replace(/^\.?\//, "").replace(/\/+$/, "");
    return clean === deliverable || clean.startsWith(`${deliverable}/`);
  });
}

/**
 * Diagnose a verifier that collected nothing (or whose every check errored in set-up) from its
 * output. Never throws; with no recognisable cause the verifier is `broken` and the reason says
 * so, quoting the first error line.
 */
export function diagnoseCollectionError(input: DiagnoseInput): CollectionDiagnosis {
  const output = input.output;
  const deliverables = input.fileOperations;
  const lines = output.split("\n");

  // Tracebacks through a deliverable file: the agent's module exists and fails to load.
  const mount = input.workspaceMountPath;
  if (mount !== undefined) {
    for (const match of output.matchAll(/File "([^"]+)", line \d+|^(\/\S+?\.py):\d+: in /gm)) {
      const file = match[1] ?? match[2] ?? "";
      const relativePath = relativeToWorkspace(file, mount);
      const deliverable =
        relativePath === undefined ? undefined : pathIsDeliverable(relativePath, deliverables);
      if (deliverable !== undefined && /Error|Exception/.test(output)) {
        return {
          kind: "deliverable-missing",
          reason: `the deliverable ${deliverable} exists but fails to load (error raised in ${relativePath})`,
          evidence: match[0],
        };
      }
    }
  }

  const syntax = lines.find((line) =>
    /^E?\s*(SyntaxError|IndentationError|TabError)\b/.test(line.trim()),
  );
  // The outermost error pytest reports (`E   RuntimeError: …`), for context when the cause is
  // found deeper in its message.
  const firstError = lines
    .map((line) => line.replace(/^E\s+/, "").trim())
    .find((line) => /^[A-Z]\w*(Error|Exception)\b/.test(line));
  const context = (evidence: string) =>
    firstError === undefined || firstError === evidence
      ? ""
      : ` (first error: ${firstError.slice(0, 200)})`;

  for (const line of lines) {
    const trimmed = line.replace(/^E\s+/, "").trim();
    const notFound = /^ModuleNotFoundError: No module named '([^']+)'/.exec(trimmed);
    const cannotImport = /^ImportError: cannot import name '([^']+)' from '([^']+)'/.exec(trimmed);
    const missing = notFound?.[1] ?? cannotImport?.[2];
    if (missing !== undefined && moduleName.test(missing)) {
      const deliverable = explainsModule(missing, deliverables);
      if (deliverable !== undefined) {
        return {
          kind: "deliverable-missing",
          reason:
            cannotImport === null
              ? `the verifier imports ${missing}, which the requirement asks to create (${deliverable}): failing as it should`
              : `the verifier imports ${cannotImport[1]} from ${missing}, which the requirement asks to change (${deliverable}): failing as it should`,
          evidence: trimmed,
        };
      }
      if (namedInText(missing, input.requirementText)) {
        return {
          kind: "deliverable-missing",
          reason: `the verifier imports ${missing}, which the requirement's text asks for: failing as it should`,
          evidence: trimmed,
        };
      }
      return {
        kind: "broken",
        reason: `${
          cannotImport === null
            ? `${missing} cannot be imported, and it is neither a deliverable of the requirement nor present: a helper module, pytest plugin or third-party package missing from the environment`
            : `the verifier imports ${cannotImport[1]} from ${missing}, which the requirement does not ask to change`
        }${context(trimmed)}`,
        evidence: trimmed,
      };
    }
    const fileMissing =
      /^(?:FileNotFoundError|IOError|OSError): \[Errno 2\] No such file or directory: '([^']+)'/.exec(
        trimmed,
      );
    if (fileMissing !== null) {
      const path = fileMissing[1] ?? "";
      const relativePath = relativeToWorkspace(path, mount) ?? path;
      const deliverable = pathIsDeliverable(relativePath, deliverables);
      if (deliverable !== undefined) {
        return {
          kind: "deliverable-missing",
          reason: `the verifier reads ${relativePath}, which the requirement asks to create (${deliverable}): failing as it should`,
          evidence: trimmed,
        };
      }
      return {
        kind: "broken",
        reason: `the verifier reads ${path}, which is not a deliverable of the requirement and does not exist`,
        evidence: trimmed,
      };
    }
  }
  if (syntax !== undefined) {
    return {
      kind: "broken",
      reason: `the verifier does not compile: ${syntax.replace(/^E\s+/, "").trim()}`,
      evidence: syntax.trim(),
    };
  }
  const usage = lines.find((line) =>
    /^(ERROR: usage:|pytest: error:|error: unrecognized arguments)/.test(line.trim()),
  );
  if (usage !== undefined) {
    return {
      kind: "broken",
      reason: `pytest refused its arguments (a plugin the verifier's command needs is missing?): ${usage.trim()}`,
      evidence: usage.trim(),
    };
  }
  const fixture = /fixture '([^']+)' not found/.exec(output);
  if (fixture !== null) {
    return {
      kind: "broken",
      reason: `the verifier uses the fixture "${fixture[1]}", which no installed pytest plugin provides`,
      evidence: fixture[0],
    };
  }
  const notFound = /(?:^|\n)\s*(?:sh: \d+: )?(\S+): (?:command )?not found/.exec(output);
  if (notFound !== null) {
    return {
      kind: "broken",
      reason: `the verifier's command needs ${notFound[1]}, which is not installed in the environment`,
      evidence: notFound[0].trim(),
    };
  }
  const shown = firstError ?? lines.find((line) => line.trim() !== "")?.trim();
  return {
    kind: "broken",
    reason: `the verifier crashed before checking anything${shown === undefined ? "" : `: ${shown.slice(0, 300)}`}`,
    ...(shown === undefined ? {} : { evidence: shown }),
  };
}
