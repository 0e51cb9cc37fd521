/**
 * The one unified-diff parser (git's and plain `diff -u` output), for the report's files-changed
 * view and synthesis' touched paths.
 *
 * Written here rather than taken from a library: `diff` (jsdiff) is not a dependency, and what we
 * need is small but must be exact where regular expressions were not — paths with spaces (git
 * ends such a name with a tab on `---`/`+++`), git's C-quoted paths (`"a/caf\303\251.txt"`),
 * renames without hunks, and removed lines that start with `--` (they look like `--- ` headers, so
 * hunk lines are counted from the `@@` header; agents' hand-written patches with wrong or missing
 * counts are still read, line by line, as before).
 */

export interface DiffFile {
  /** Path before the change (prefix `a/` removed); undefined for a created file. */
  readonly oldPath: string | undefined;
  /** Path after the change (prefix `b/` removed); undefined for a deleted file. */
  readonly newPath: string | undefined;
  /** The path to show: the new one, or the old one for a deleted file. */
  readonly path: string;
  /** Hunk headers and hunk lines (`@@ …`, `+…`, `-…`, ` …`, `\ No newline at end of file`). */
  readonly lines: readonly string[];
}

interface FileInProgress {
  oldPath: string | undefined;
  newPath: string | undefined;
  /** The `diff --git` header's guess, used when no later line names the paths. */
  headerPath: string | undefined;
  lines: string[];
}

const escapes: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  "\\": 92,
};

/** A git C-quoted name (`"…"` with backslash and octal escapes of UTF-8 bytes), and what follows. */
function unquote(text: string): { value: string; rest: string } {
  const bytes: number[] = [];
  let index = 1;
  while (index < text.length && text[index] !== '"') {
    const character = text[index] as string;
    if (character === "\\" && index + 1 < text.length) {
      const octal = /^[0-7]{3}/.exec(text.slice(index + 1));
      if (octal !== null) {
        bytes.push(Number.parseInt(octal[0], 8));
        index += 4;
        continue;
      }
      const next = text[index + 1] as string;
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      index += 2;
      continue;
    }
    bytes.push(...Buffer.from(character, "utf8"));
    index += 1;
  }
  return { value: Buffer.from(bytes).toString("utf8"), rest: text.slice(index + 1) };
}

function stripPrefix(path: string, prefix: "a/" | "b/"): string {
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The path of a `---`/`+++` line: quoted or up to a tab (git's end of a name with spaces). */
function headerLinePath(field: string, prefix: "a/" | "b/"): string | undefined {
  const raw = field.startsWith('"') ? unquote(field).value : (field.split("\t")[0] as string);
  if (raw === "/dev/null") return undefined;
  return stripPrefix(raw, prefix);
}

/** `rename from X` / `copy to X` paths: no prefix, quoted when git had to. */
function plainPath(field: string): string {
  return field.startsWith('"') ? unquote(field).value : field;
}

/**
 * The new path named by `diff --git a/X b/Y`. Unquoted names with spaces are ambiguous; when
 * both halves are the same (everything but a rename) the split is in the middle, otherwise the
 * later `rename to` / `+++` line names the path.
 */
function gitHeaderPath(rest: string): string | undefined {
  if (rest.startsWith('"')) {
    const first = unquote(rest);
    const second = first.rest.trimStart();
    return stripPrefix(second.startsWith('"') ? unquote(second).value : second, "b/");
  }
  const half = (rest.length - 5) / 2;
  if (Number.isInteger(half) && rest.startsWith("a/") && rest.slice(2 + half, 5 + half) === " b/") {
    const left = rest.slice(2, 2 + half);
    if (left === rest.slice(5 + half)) return left;
  }
  const split = rest.lastIndexOf(" b/");
  return split === -1 ? undefined : rest.slice(split + 3);
}

function hunkCounts(line: string): { old: number; new: number } | undefined {
  const match = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
  if (match === null) return undefined;
  return { old: Number(match[1] ?? "1"), new: Number(match[2] ?? "1") };
}

/** Split a unified diff into its files, in order. Text that is not a diff yields no files. */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const files: FileInProgress[] = [];
  let current: FileInProgress | undefined;
  let remainingOld = 0;
  let remainingNew = 0;
  const start = (): FileInProgress => {
    current = { oldPath: undefined, newPath: undefined, headerPath: undefined, lines: [] };
    files.push(current);
    return current;
  };
  for (const line of text.split("\n")) {
    if (current !== undefined && (remainingOld > 0 || remainingNew > 0)) {
      const kind = line.charAt(0);
      if (kind === " " || kind === "-" || kind === "+" || line === "") {
        // An empty line inside a hunk is a context line whose space was stripped (e-mail, editors).
        if (kind !== "+") remainingOld -= 1;
        if (kind !== "-") remainingNew -= 1;
        current.lines.push(line);
        continue;
      }
      remainingOld = 0;
      remainingNew = 0;
    }
    if (line.startsWith("\\")) {
      current?.lines.push(line);
      continue;
    }
    if (line.startsWith("diff --git ")) {
      start().headerPath = gitHeaderPath(line.slice("diff --git ".length));
      continue;
    }
    if (line.startsWith("--- ")) {
      // A second file of a plain diff (no `diff --git` lines) starts at its `---` line.
      const file = current === undefined || current.lines.length > 0 ? start() : current;
      file.oldPath = headerLinePath(line.slice(4), "a/");
      continue;
    }
    if (line.startsWith("+++ ")) {
      const file = current ?? start();
      file.newPath = headerLinePath(line.slice(4), "b/");
      continue;
    }
    if (current === undefined) continue;
    if (line.startsWith("rename from ") || line.startsWith("copy from "))
      current.oldPath = plainPath(line.slice(line.indexOf(" from ") + 6));
    else if (line.startsWith("rename to ") || line.startsWith("copy to "))
      current.newPath = plainPath(line.slice(line.indexOf(" to ") + 4));
    else if (line.startsWith("@@")) {
      // A hunk header without counts (hand-written patches) starts a hunk read loosely below.
      const counts = hunkCounts(line);
      remainingOld = counts?.old ?? 0;
      remainingNew = counts?.new ?? 0;
      current.lines.push(line);
    } else if (current.lines.length > 0 && /^[+\- ]/.test(line)) {
      // Past the counted lines (or in a hunk without counts): a patch whose counts are off.
      current.lines.push(line);
    }
  }
  return files.map((file) => ({
    oldPath: file.oldPath,
    newPath: file.newPath,
    path: file.newPath ?? file.oldPath ?? file.headerPath ?? "",
    lines: file.lines,
  }));
}
