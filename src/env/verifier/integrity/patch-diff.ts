/**
 * The new side of a `git diff` (as `captureWorkspacePatch` stores it), file by file: the lines
 * each hunk shows after the change (context and added, never removed), with their line numbers
 * in the changed file and whether the agent added them. The patch scan parses this text, so a
 * finding always names a line of the agent's change.
 */

export interface NewSideLine {
  /** Line number in the file after the change (1-based). */
  readonly line: number;
  readonly text: string;
  /** True for a line the change added; false for a context line. */
  readonly added: boolean;
}

export interface ChangedFile {
  /** Path after the change, relative to the repository, forward slashes. */
  readonly path: string;
  /** The change made the file (it did not exist before). */
  readonly created: boolean;
  /** A binary change: no lines to read. */
  readonly binary: boolean;
  /** Each hunk's new-side lines, in order. */
  readonly hunks: readonly (readonly NewSideLine[])[];
}

/** A path as git prints it in a `+++`/`---` line or a header: quoted paths unescaped. */
function unquotePath(raw: string): string {
  const trimmed = raw.trim();
  if (!trimmed.startsWith('"')) return trimmed;
  // git C-quotes paths with unusual bytes: `"b/na\303\257ve.py"`. Octal escapes are UTF-8 bytes.
  const inner = trimmed.slice(1, trimmed.endsWith('"') ? -1 : undefined);
  const bytes: number[] = [];
  const simple: Record<string, number> = {
    n: 10,
    t: 9,
    '"': 34,
    "\\": 92,
    a: 7,
    b: 8,
    f: 12,
    r: 13,
    v: 11,
  };
  for (let index = 0; index < inner.length; index += 1) {
    const character = inner[index] as string;
    if (character !== "\\") {
      bytes.push(...Buffer.from(character, "utf8"));
      continue;
    }
    const next = inner[index + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(inner.slice(index + 1));
    if (octal !== null) {
      bytes.push(Number.parseInt(octal[0], 8));
      index += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      index += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

function stripPrefix(path: string): string {
  return path.replace(/^[ab]\//, "");
}

const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

interface FileBuilder {
  path: string;
  created: boolean;
  binary: boolean;
  hunks: NewSideLine[][];
}

/** Split a stored diff into its files' new sides. Text that is not a diff yields no files. */
export function parseNewSide(diff: string): ChangedFile[] {
  const files: FileBuilder[] = [];
  let current: FileBuilder | undefined;
  let hunk: NewSideLine[] | undefined;
  let next = 0;
  for (const raw of diff.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.startsWith("diff --git ")) {
      // The header's second path; refined by `+++` when there is one (a rename-free diff).
      const header = /^diff --git (?:"[^"]*"|\S+) (.+)$/.exec(line);
      current = {
        path: stripPrefix(unquotePath(header?.[1] ?? "")),
        created: false,
        binary: false,
        hunks: [],
      };
      files.push(current);
      hunk = undefined;
      continue;
    }
    if (current === undefined) continue;
    if (hunk === undefined || !/^[ +\-\\]/.test(line)) {
      if (line.startsWith("new file mode")) current.created = true;
      else if (line.startsWith("GIT binary patch") || line.startsWith("Binary files")) {
        current.binary = true;
      } else if (line.startsWith("+++ ") && !line.startsWith("+++ /dev/null")) {
        current.path = stripPrefix(unquotePath(line.slice(4)));
      }
      const header = HUNK_HEADER.exec(line);
      if (header !== null) {
        hunk = [];
        current.hunks.push(hunk);
        next = Number(header[1]);
      }
      continue;
    }
    const marker = line[0];
    if (marker === "+" || marker === " ") {
      hunk.push({ line: next, text: line.slice(1), added: marker === "+" });
      next += 1;
    }
  }
  return files;
}
