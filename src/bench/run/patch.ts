/**
 * The final change an agent made, captured as a binary-safe git diff between the prepared base
 * and the workspace after the agent ran (before the verifier touches it), so `bench regrade`
 * can apply it to a fresh workspace and run another verifier without running the agent again.
 *
 * The workspace is untrusted: the agent may have rewritten its `.git` (config with hooks,
 * filters or an fsmonitor command). So git never reads it: a private repository outside the
 * workspace indexes both trees (`--git-dir`/`--work-tree`, a temporary index each), with no
 * system or global configuration, and git itself skips every `.git` entry of a work tree.
 * `.gitattributes` in the workspace can only name filters and diff drivers, and none is
 * configured in the private repository, so nothing the agent wrote is ever executed. Ignored
 * files are included (`add --force`): a `.gitignore` written by the agent must not hide a change.
 *
 * Cost. Indexing the base writes every one of its files into the private repository as a loose
 * object, which dominated a run's overhead (~0.4 s for 506 files, ~2.3 s for 3,000, measured):
 * so when the caller passes the materialised `Workspace`, the base is indexed once per base
 * (`baseSnapshot`: its objects, index and tree, made in a holder beside the workspaces with an
 * owner record, so the workspace sweep removes it if this process dies, then moved into the
 * base's own folder and kept there for every later process: a `bench run`, a resumed one or a
 * queue worker no longer pays ~2 s for 3,000 files each), and each run
 * writes only the objects of what changed into its own object folder, with the snapshot's as a
 * read-only alternate. Nothing a run writes reaches the snapshot, so one agent's change cannot
 * leak into another run's patch, and the snapshot is made from the base alone, never from a
 * workspace, and lives where a sandboxed agent cannot write (bubblewrap binds only the workspace
 * writable, a container sees only the workspace; `--sandbox unsafe` confines nothing, there an
 * agent could write the snapshot as it could the base or the results store). The workspace is
 * then indexed:
 * - for a copied workspace, from a fresh index: every file read and hashed, as before;
 * - for an overlay workspace, from a copy of the base's index, changed only where the overlay's
 *   upper layer says the workspace may differ (`overlayChanges`): the entries at or below a path
 *   the upper layer holds, and those a re-made (opaque) folder hides, are dropped; the files and
 *   links of the upper layer are read and hashed again (git's stat check never decides it, and
 *   an edit that keeps size and mtime is caught). Every other entry is a path the kernel serves
 *   from the base unchanged, so the base's entry is its entry, and git reads nothing else of the
 *   workspace: the cost follows the change, not the repository. Where the argument has gaps the
 *   fresh index is used instead: a `.gitattributes` created, changed or removed anywhere (it
 *   changes how unchanged files hash), a `.git` below the top (a nested repository), a base
 *   holding nested repositories, a name in the upper layer or the base's index that is not
 *   UTF-8, a special file (fifo, socket, device), or an upper layer that cannot be read.
 * Either way the index is the one the fresh capture builds, so the patch is byte-identical to
 * the capture from the workspace's path, which still indexes both trees from scratch
 * (`patch-snapshot.test.ts` compares the two on tricky changes).
 *
 * About 460 lines in one file on purpose: the snapshot, the overlay shortcut and the fresh
 * capture must build the same index, and side by side one can check that they do.
 */
import { randomBytes } from "node:crypto";
import {
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import { InfrastructureError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { parseJsonResult } from "../../core/parse.js";
import { runProcess } from "../../core/process.js";
import { scanPatch, type Workspace } from "../../env/index.js";
import { writeOwner } from "../../env/workspace/owner.js";
import { PATCH_LIMIT, type RunPatch } from "../store/results.js";

const GIT_TIMEOUT_MS = 120_000;

/** Environment for the private git: nothing from the caller's git set-up, no configuration files. */
function gitEnvironment(
  home: string,
  index: string,
  objects?: { readonly own: string },
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_INDEX_FILE: index,
    GIT_TERMINAL_PROMPT: "0",
    // A run's objects go to its own folder; the snapshot's are reached through the alternates
    // file in it (written by `runObjects`), never written.
    ...(objects === undefined ? {} : { GIT_OBJECT_DIRECTORY: objects.own }),
  };
}

/**
 * Room for the raw lines before the patch in one `git diff --patch-with-raw` (the cap a separate
 * `git diff-tree --raw` had): ~100 bytes a changed path.
 */
const RAW_LINES_BYTES = 16 * 1024 * 1024;

async function privateGit(
  gitDir: string,
  workTree: string,
  env: Record<string, string>,
  args: readonly string[],
  options: { readonly maxOutputBytes?: number; readonly input?: string } = {},
): Promise<string> {
  const result = await runProcess(
    "git",
    [
      "--git-dir",
      gitDir,
      "--work-tree",
      workTree,
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.hooksPath=/dev/null",
      ...args,
    ],
    {
      cwd: gitDir,
      env,
      timeoutMs: GIT_TIMEOUT_MS,
      ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
      ...(options.input === undefined ? {} : { input: options.input }),
    },
  );
  if (result.spawnError !== undefined) throw result.spawnError;
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "bench.run-patch-git",
      `git ${args[0]} failed (${result.exitCode}): ${result.stderr.trim()}`,
    );
  }
  return result.stdout;
}

async function initPrivateRepository(gitDir: string, home: string): Promise<void> {
  const init = await runProcess("git", ["init", "-q", "--bare", gitDir], {
    env: gitEnvironment(home, join(dirname(gitDir), "unused.index")),
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (init.spawnError !== undefined) throw init.spawnError;
  if (init.exitCode !== 0)
    throw new InfrastructureError("bench.run-patch-git", `git init failed: ${init.stderr.trim()}`);
}

/** Every file of `folder` into the index of `env`. */
async function indexFolder(gitDir: string, folder: string, env: Record<string, string>) {
  await privateGit(gitDir, folder, env, ["add", "--all", "--force", "--", "."]);
}

async function treeOf(gitDir: string, folder: string, env: Record<string, string>) {
  await indexFolder(gitDir, folder, env);
  return (await privateGit(gitDir, folder, env, ["write-tree"])).trim();
}

/** The base indexed once: a private bare repository holding its objects, its index and tree. */
interface BaseSnapshot {
  /** The folder holding the repository, its home and the index. */
  readonly holder: string;
  readonly gitDir: string;
  readonly home: string;
  readonly index: string;
  readonly tree: string;
  /** The base's index as `ls-files --stage -z` lists it, an entry each. */
  readonly entries: readonly string[];
  /** Every path of the base's index. */
  readonly paths: readonly string[];
  /** The names directly in each folder of the base's index (`""` is the top). */
  readonly children: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Whether an overlay workspace may start from the base's index: not when the base holds
   * nested repositories (gitlinks) or a path git printed in bytes that are not UTF-8 (its name
   * here would not be its name in the index).
   */
  readonly reusable: boolean;
}

const snapshots = new Map<string, Promise<BaseSnapshot>>();
/** Kept snapshots this process found broken: it makes its own instead (see `forgetSnapshot`). */
const distrusted = new Set<string>();

/**
 * The snapshot of a workspace's base, made once per process per base (tree, digest and the
 * folder its workspaces live in) from the base's tree alone. A failure is not remembered.
 */
function snapshotKey(workspace: Workspace): { key: string; root: string } {
  const root = dirname(dirname(workspace.path));
  return { key: `${workspace.base.tree}\0${workspace.base.digest}\0${root}`, root };
}

function baseSnapshot(workspace: Workspace): Promise<BaseSnapshot> {
  const { key, root } = snapshotKey(workspace);
  let snapshot = snapshots.get(key);
  if (snapshot === undefined) {
    snapshot = keptOrNewSnapshot(workspace, root);
    snapshots.set(key, snapshot);
    snapshot.catch(() => snapshots.delete(key));
  }
  return snapshot;
}

/**
 * Forget every snapshot this process remembers (the kept ones stay on disk): the next capture
 * reads a kept one again as a new process would. For long-lived processes and tests.
 */
export function forgetBaseSnapshots(): void {
  snapshots.clear();
  distrusted.clear();
}

/**
 * Forget this process's snapshot of the workspace's base after a capture through it failed; a
 * kept one is not used again by this process (it is never removed: other processes may be
 * reading it, and their failures fall back the same way).
 */
function forgetSnapshot(workspace: Workspace): void {
  snapshots.delete(snapshotKey(workspace).key);
  distrusted.add(keptSnapshotFolder(workspace));
}

/**
 * Where a base's snapshot is kept for every later process: in the base's own folder (beside
 * `tree/`, never inside it), named by the base's digest, so it goes when the base goes and a base
 * prepared again under the same key never meets the snapshot of the old one.
 */
function keptSnapshotFolder(workspace: Workspace): string {
  return join(workspace.base.root, `patch-snapshot-${workspace.base.digest.slice(0, 32)}`);
}

const SNAPSHOT_FORMAT = formatTag("patch-snapshot", 1);
const KEPT_RECORD = "snapshot.json";
const keptRecordSchema = z.object({
  format: formatTagSchema(SNAPSHOT_FORMAT),
  digest: z.string(),
  tree: z.string().regex(/^[0-9a-f]{40,64}$/),
  entries: z.array(z.string()),
});

/**
 * The kept snapshot of the workspace's base when there is a complete one for this digest (its
 * record is written before the folder is moved into place, so a folder there is complete), else
 * a new one, made in a holder beside the workspaces and then moved into place for the next
 * process. Making it reads and hashes every file of the base (~2 s for 3,000 files), which every
 * `bench run` paid once before; now a machine pays it once per base.
 */
async function keptOrNewSnapshot(workspace: Workspace, root: string): Promise<BaseSnapshot> {
  const kept = keptSnapshotFolder(workspace);
  const { digest } = workspace.base;
  if (!distrusted.has(kept)) {
    const found = await readKeptSnapshot(kept, digest);
    if (found !== undefined) return found;
  }
  const made = await makeSnapshot(workspace.base.tree, root, workspace.base.key);
  if (distrusted.has(kept)) return made;
  const record = { format: SNAPSHOT_FORMAT, digest, tree: made.tree, entries: made.entries };
  try {
    await writeFile(join(made.holder, KEPT_RECORD), JSON.stringify(record));
    // Atomic: another process sees no folder or a complete one. When another process moved its
    // own there first, the rename fails and that one is used.
    await rename(made.holder, kept);
  } catch {
    const other = await readKeptSnapshot(kept, digest);
    if (other === undefined) return made;
    await rm(made.holder, { recursive: true, force: true });
    return other;
  }
  return (await readKeptSnapshot(kept, digest)) ?? made;
}

/** A kept snapshot read back through its record; undefined when absent, partial or another base's. */
async function readKeptSnapshot(folder: string, digest: string): Promise<BaseSnapshot | undefined> {
  const text = await readFile(join(folder, KEPT_RECORD), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const record = parseJsonResult(keptRecordSchema, text);
  if (!record.ok || record.value.digest !== digest) return undefined;
  return snapshotIn(folder, record.value.tree, record.value.entries);
}

/** A snapshot's fields from its holder, tree id and `ls-files --stage -z` entries. */
function snapshotIn(holder: string, tree: string, entries: readonly string[]): BaseSnapshot {
  const paths = entries.map((entry) => entry.slice(entry.indexOf("\t") + 1));
  const reusable = !entries.some(
    (entry) => entry.startsWith("160000 ") || entry.includes("\uFFFD"),
  );
  const children = new Map<string, Set<string>>();
  for (const path of paths) {
    const segments = path.split("/");
    for (let depth = 0; depth < segments.length; depth += 1) {
      const folder = segments.slice(0, depth).join("/");
      let names = children.get(folder);
      if (names === undefined) {
        names = new Set();
        children.set(folder, names);
      }
      names.add(segments[depth] as string);
    }
  }
  return {
    holder,
    gitDir: join(holder, "git"),
    home: join(holder, "home"),
    index: join(holder, "base.index"),
    tree,
    entries,
    paths,
    children,
    reusable,
  };
}

async function makeSnapshot(tree: string, root: string, baseKey: string): Promise<BaseSnapshot> {
  // Beside the workspaces, in a holder with this process as owner: never visible to a sandboxed
  // agent (only its workspace is), and removed by `sweepStaleWorkspaces` if this process dies
  // before moving it into the base's folder.
  const holder = join(root, `${baseKey}-patch-${randomBytes(6).toString("hex")}`);
  await mkdir(holder, { recursive: true });
  try {
    await writeOwner(holder);
    const gitDir = join(holder, "git");
    const home = join(holder, "home");
    const index = join(holder, "base.index");
    await initPrivateRepository(gitDir, home);
    const env = gitEnvironment(home, index);
    const treeId = await treeOf(gitDir, tree, env);
    // `<mode> <object> <stage>\t<path>` per entry, NUL-terminated.
    const entries = (await privateGit(gitDir, tree, env, ["ls-files", "--stage", "-z"]))
      .split("\0")
      .filter((entry) => entry !== "");
    return snapshotIn(holder, treeId, entries);
  } catch (error) {
    await rm(holder, { recursive: true, force: true });
    throw error;
  }
}

/** A run's own object folder, with the snapshot's objects as a read-only alternate. */
async function runObjects(scratch: string, snapshot: BaseSnapshot): Promise<string> {
  const own = join(scratch, "objects");
  const alternate = join(snapshot.gitDir, "objects");
  // The alternates file is one path a line; a path with a newline cannot be written into it.
  if (alternate.includes("\n")) {
    throw new InfrastructureError(
      "bench.run-patch-path",
      `the workspace folder ${alternate} holds a newline`,
    );
  }
  await mkdir(join(own, "info"), { recursive: true });
  await writeFile(join(own, "info", "alternates"), `${alternate}\n`);
  return own;
}

interface UpperEntry {
  readonly path: string;
  readonly folder: boolean;
}

/**
 * Every entry of an overlay's upper layer as a workspace path, or undefined when the reuse of
 * the base's index is not known to be exact (see the module comment). The top `.git` is left
 * out: git never indexes it. Symbolic links are listed, never followed.
 */
async function upperEntries(upper: string): Promise<UpperEntry[] | undefined> {
  const found: UpperEntry[] = [];
  const walk = async (folder: string, prefix: string): Promise<boolean> => {
    const entries = await readdir(folder, { withFileTypes: true, encoding: "buffer" });
    for (const entry of entries) {
      const name = entry.name.toString("utf8");
      // A name that is not UTF-8 would reach git as another name and leave its entry in place.
      if (!Buffer.from(name, "utf8").equals(entry.name)) return false;
      if (name === ".gitattributes") return false;
      if (name === ".git") {
        if (prefix === "") continue;
        return false;
      }
      const path = `${prefix}${name}`;
      const folderEntry = entry.isDirectory();
      found.push({ path, folder: folderEntry });
      if (folderEntry && !(await walk(join(folder, name), `${path}/`))) return false;
    }
    return true;
  };
  try {
    return (await walk(upper, "")) ? found : undefined;
  } catch {
    // Unreadable (the agent may leave anything behind): the fresh index reads the workspace itself.
    return undefined;
  }
}

/**
 * What an overlay workspace changed, from its upper layer and one listing of each folder there:
 * the base entries to drop (`remove`) and the workspace files and links to index again (`add`);
 * undefined when the upper layer holds something only git's own walk handles (a special file).
 * An entry in none of them is served by the kernel from the base, unchanged: no upper entry at
 * its path, none but folders above it, and each of those folders still lists it (a folder
 * removed and made again, opaque, hides the base's entries without a whiteout for each). That
 * holds because workspaces are mounted without `redirect_dir`, so no upper folder serves another
 * base folder's entries (`materialise.ts`).
 */
async function overlayChanges(
  snapshot: BaseSnapshot,
  workspacePath: string,
  upper: readonly UpperEntry[],
): Promise<{ remove: string[]; add: string[] } | undefined> {
  const named = new Set(upper.map((entry) => entry.path));
  // Paths whose base entries, and every base entry below them, are gone or replaced.
  const replaced = new Set(upper.filter((entry) => !entry.folder).map((entry) => entry.path));
  for (const folder of ["", ...upper.filter((entry) => entry.folder).map((entry) => entry.path)]) {
    const children = snapshot.children.get(folder);
    if (children === undefined) continue;
    const listed = new Set(await readdir(join(workspacePath, folder)));
    for (const child of children) {
      if (!listed.has(child)) replaced.add(folder === "" ? child : `${folder}/${child}`);
    }
  }
  const remove = snapshot.paths.filter((path) => {
    if (named.has(path) || replaced.has(path)) return true;
    for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) {
      if (replaced.has(path.slice(0, slash))) return true;
    }
    return false;
  });
  const add: string[] = [];
  for (const entry of upper) {
    if (entry.folder) continue;
    const found = await lstat(join(workspacePath, entry.path)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    });
    // A whiteout: removed, nothing to add.
    if (found === undefined) continue;
    if (!found.isFile() && !found.isSymbolicLink()) return undefined;
    add.push(entry.path);
  }
  return { remove, add };
}

/**
 * The workspace indexed in `index`, in the snapshot's repository (objects of changed files in
 * `objects`). An overlay's: the base's index, minus what the upper layer says changed, plus those
 * files read and hashed again (whatever their timestamps); git reads nothing else of the
 * workspace. Else a fresh index, every file read and hashed.
 */
async function indexWorkspace(
  snapshot: BaseSnapshot,
  workspace: Workspace,
  index: string,
  env: Record<string, string>,
): Promise<void> {
  const upper =
    workspace.upperLayer === undefined || !snapshot.reusable
      ? undefined
      : await upperEntries(workspace.upperLayer);
  const changes =
    upper === undefined
      ? undefined
      : // A folder that cannot be listed or a file that cannot be examined: git's walk decides.
        await overlayChanges(snapshot, workspace.path, upper).catch(() => undefined);
  if (changes === undefined) return indexFolder(snapshot.gitDir, workspace.path, env);
  await copyFile(snapshot.index, index);
  const { gitDir } = snapshot;
  if (changes.remove.length > 0) {
    await privateGit(
      gitDir,
      workspace.path,
      env,
      ["update-index", "-z", "--force-remove", "--stdin"],
      { input: `${changes.remove.join("\0")}\0` },
    );
  }
  if (changes.add.length > 0) {
    // Literal paths (no globs, no `:(magic)`), NUL-separated: any name an agent can write.
    await privateGit(
      gitDir,
      workspace.path,
      env,
      ["--literal-pathspecs", "add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"],
      { input: `${changes.add.join("\0")}\0` },
    );
  }
}

/**
 * The base's tree and the workspace in the index of `env` (`GIT_INDEX_FILE`): the change is what
 * `git diff --cached <before>` shows, with no tree written for the workspace (one process less
 * per run).
 */
interface Indexed {
  readonly gitDir: string;
  readonly env: Record<string, string>;
  readonly before: string;
}

/** The base's tree from its snapshot, the workspace indexed with a run's own object folder. */
async function snapshotIndexed(
  workspace: Workspace,
  scratch: string,
  index: string,
): Promise<Indexed> {
  const snapshot = await baseSnapshot(workspace);
  const env = gitEnvironment(snapshot.home, index, { own: await runObjects(scratch, snapshot) });
  await indexWorkspace(snapshot, workspace, index, env);
  return { gitDir: snapshot.gitDir, env, before: snapshot.tree };
}

/** Both indexed from scratch in a new private repository (nothing remembered). */
async function freshIndexed(
  base: string,
  workspace: string,
  scratch: string,
  index: string,
): Promise<Indexed> {
  const gitDir = join(scratch, "git");
  const home = join(scratch, "home");
  await initPrivateRepository(gitDir, home);
  const before = await treeOf(gitDir, base, gitEnvironment(home, join(scratch, "base.index")));
  const env = gitEnvironment(home, index);
  await indexFolder(gitDir, workspace, env);
  return { gitDir, env, before };
}

/**
 * `git diff --patch-with-raw`'s output split: the raw lines (`:<old mode> <new mode> <old> <new>
 * <status>\t<path>`, one per changed path; paths are quoted, so a line never holds a newline),
 * then, after one empty line, the patch.
 */
export function splitRawAndPatch(output: string): { raw: string[]; patch: string } {
  const raw: string[] = [];
  let at = 0;
  while (output.startsWith(":", at)) {
    const end = output.indexOf("\n", at);
    if (end === -1) return { raw: [...raw, output.slice(at)], patch: "" };
    raw.push(output.slice(at, end));
    at = end + 1;
  }
  if (raw.length > 0 && output.startsWith("\n", at)) at += 1;
  return { raw, patch: output.slice(at) };
}

/**
 * The diff from `base` to `workspace` (both host folders; `.git` left out), capped at
 * `limit` characters: a longer diff is kept cut and marked `truncated`, and cannot be re-applied.
 * `redact` is applied to the text (secrets the agent may have written into files).
 *
 * Pass the materialised `Workspace` (of the base at `base`) rather than its path to index the
 * base once per process instead of once per call; the patch is the same.
 */
export async function captureWorkspacePatch(
  base: string,
  workspace: string | Workspace,
  redact: (text: string) => string = (text) => text,
  limit = PATCH_LIMIT,
): Promise<RunPatch> {
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-patch-"));
  try {
    const workspacePath = typeof workspace === "string" ? workspace : workspace.path;
    const snapshotted =
      typeof workspace !== "string" && workspace.base.tree === base
        ? await snapshotIndexed(workspace, scratch, join(scratch, "from-base.index")).catch(() => {
            // A snapshot gone from under this process (its folder removed) or any other failure
            // of the shortcut: forget it, so the next run makes it again, and capture this run
            // the way that needs nothing remembered.
            forgetSnapshot(workspace);
            return undefined;
          })
        : undefined;
    const { gitDir, env, before } =
      snapshotted ??
      (await freshIndexed(base, workspacePath, scratch, join(scratch, "workspace.index")));
    // The changed paths and the patch from one process: the raw lines come first (room for them
    // beside the patch's own cap; one byte more than the limit tells a cut diff from one exactly
    // at the limit).
    const output = await privateGit(
      gitDir,
      workspacePath,
      env,
      [
        "diff",
        "--cached",
        "--patch-with-raw",
        "--binary",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        before,
      ],
      { maxOutputBytes: RAW_LINES_BYTES + limit * 4 + 1 },
    );
    const { raw: changes, patch: raw } = splitRawAndPatch(output);
    const nested = changes
      .filter((line) => line.split(" ")[1] === "160000")
      .map((line) => line.split("\t")[1] ?? "");
    const redactedText = redact(raw);
    const truncated = redactedText.length > limit;
    // Layer 5 reads the whole change, also the part a cut diff no longer stores.
    // A scan that fails leaves the run to a person, never silently clean.
    const scan = await scanPatch(redactedText).catch((error: unknown) => [
      {
        file: "(the change)",
        line: 1,
        rule: "unscanned",
        detail: `the patch scan failed: ${error instanceof Error ? error.message : String(error)}`,
      },
    ]);
    return {
      diff: truncated ? redactedText.slice(0, limit) : redactedText,
      length: raw.length,
      files: changes.length,
      truncated,
      redacted: redactedText !== raw,
      ...(nested.length === 0
        ? {}
        : {
            incomplete: `folders made into their own git repositories are recorded as commit ids, not their files: ${nested.slice(0, 5).join(", ")}`,
          }),
      ...(scan.length === 0 ? {} : { scan }),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
