/**
 * Fresh workspaces without a full-tree walk on every run. A fresh workspace is its base's tree
 * plus the change materialisation applies: an overlay over the base or a `cp -a` of it
 * (byte-identical, `.git` included), then the removal of agent-skill folders. So the base is
 * walked once per process — its digest compared with the one recorded at preparation, so a
 * base changed in the cache since then fails loudly instead of handing agents a tree the suite
 * did not pin, and its entries checked for anything the skill-folder clean-up could remove —
 * and each run then costs no walk at all:
 * - the clean-up is skipped when the base holds no `<agent folder>/skills` entry anywhere (a
 *   superset of what `cleanAgentSkillFolders` removes, so skipping it changes nothing);
 * - the workspace's digest is the verified base digest when nothing was removed, else the
 *   workspace itself is hashed.
 *
 * What this relies on, and why it holds: nothing writes to a prepared base. Bubblewrap binds
 * the host read-only and only the workspace writable; containers see only the workspace; an
 * overlay writes to its own upper layer. Only an unsandboxed process (`--sandbox unsafe`, or
 * anything else on the host) could change a base under a running process, after the check.
 *
 * A later process verifies by metadata alone, as git's index does: after a full walk whose
 * digest equals the recorded one, a stamp beside the tree (`base.root`/STAMP_FILE, never inside
 * the tree, which would change its digest) records every entry's path, type, mode, size, inode,
 * mtime and ctime in nanoseconds, each taken by `lstat` before the entry was read. The next
 * process `lstat`s the tree in the same order and, when every entry is equal, takes the stamp's
 * digest and skill-folder flag without reading a file. Why that is sound: a file's content
 * cannot change without its ctime moving on — `utimes` can put mtime back, but it sets ctime to
 * now, and nothing short of changing the clock or writing the block device sets ctime back — and
 * an entry added, removed, renamed, re-linked or re-moded changes the list. Entries whose ctime
 * is younger than STAMP_RACY_MARGIN_MS when the walk starts are not stamped (nothing is): a write
 * in the same coarse clock tick as the `lstat` would leave ctime equal (git's "racy" entries).
 *
 * What it cannot catch: a process with the right to change the cache could also rewrite the
 * stamp, exactly as it could rewrite the digest recorded in `meta.json` — the threat model above
 * (nothing writes to a prepared base) is unchanged; nor a clock set back, or the block device
 * written under the filesystem. Any doubt about the stamp — missing, unparsable, another
 * version, another digest, one entry different — means the full walk, never an error.
 */
import { type BigIntStats, lstatSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InfrastructureError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { writeFileAtomic } from "../../core/fs.js";
import { parseJsonResult } from "../../core/parse.js";
import { AGENT_SKILL_DIRECTORIES } from "../../skill/install.js";
import type { PreparedBase } from "./base.js";
import { type TreeEntryKind, treeDigest, treeEntries } from "./digest.js";
import { type MaterialiseOptions, materialiseWorkspace, type Workspace } from "./materialise.js";

export interface VerifiedBase {
  /** `treeDigest` of the base's tree, equal to the digest recorded at preparation. */
  readonly digest: string;
  /** Whether an entry named `skills` sits directly in an agent folder somewhere in the tree. */
  readonly mayHoldSkillFolders: boolean;
}

/** How a check reached its answer: a matching stamp (no file read) or the full walk. */
export interface BaseCheck extends VerifiedBase {
  readonly source: "stamp" | "walk";
}

/** The stamp's file name in `base.root`, beside `tree/` and `meta.json`. */
export const STAMP_FILE = "tree-stamp.json";
/** The stamp's format; a stamp of any other (an older or later skillsmith's) means a full walk. */
export const STAMP_FORMAT = formatTag("base-stamp", 1);

/**
 * How old every entry's ctime must be, when the full walk starts, for the walk to be stamped.
 * Filesystems take timestamps from a coarse clock (a few milliseconds per tick); a second is
 * far beyond any tick, and a base is only unstamped until a process verifies it a second later.
 */
export const STAMP_RACY_MARGIN_MS = 1000;

const stampSchema = z.object({
  format: formatTagSchema(STAMP_FORMAT),
  digest: z.string(),
  mayHoldSkillFolders: z.boolean(),
  entries: z.array(z.string()),
});

const agentFolderNames: ReadonlySet<string> = new Set(
  AGENT_SKILL_DIRECTORIES.map((relativePath) => relativePath.split("/")[0] ?? ""),
);

const verified = new Map<string, Promise<VerifiedBase>>();

/**
 * The base's tree, checked once per process per base: its digest (compared with the recorded
 * one; a difference throws an `InfrastructureError`, `env.base-changed`) and whether it may hold
 * agent-skill folders — from the stamp when the tree's metadata matches it, else by the full
 * walk. A failed check is not remembered: the next call walks again.
 */
export function verifyBase(base: PreparedBase): Promise<VerifiedBase> {
  const key = `${base.tree}\0${base.digest}`;
  let result = verified.get(key);
  if (result === undefined) {
    result = checkBase(base).then(({ digest, mayHoldSkillFolders }) => ({
      digest,
      mayHoldSkillFolders,
    }));
    verified.set(key, result);
    result.catch(() => verified.delete(key));
  }
  return result;
}

/** Forget what this process verified (tests: the next `verifyBase` behaves as a new process's). */
export function forgetVerifiedBases(): void {
  verified.clear();
}

/**
 * One check without the per-process memo: the stamp when every entry's metadata equals it, else
 * the full walk (which throws `env.base-changed` on a real difference and stamps a success).
 */
export async function checkBase(
  base: PreparedBase,
  options: { readonly racyMarginMs?: number } = {},
): Promise<BaseCheck> {
  const stamp = await readStamp(base);
  if (stamp !== undefined && stamp.digest === base.digest && matchesStamp(base.tree, stamp)) {
    return {
      digest: stamp.digest,
      mayHoldSkillFolders: stamp.mayHoldSkillFolders,
      source: "stamp",
    };
  }
  return walkBase(base, options.racyMarginMs ?? STAMP_RACY_MARGIN_MS);
}

async function walkBase(base: PreparedBase, racyMarginMs: number): Promise<BaseCheck> {
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  let mayHoldSkillFolders = false;
  // The root's own mode is hashed too; its lstat is taken before the walk reads anything.
  const rootInfo = lstatSync(base.tree, { bigint: true });
  const entries = [stampEntry("", "dir", rootInfo)];
  let racy = ctimeIsRacy(rootInfo, startedNs, racyMarginMs);
  const digest = await treeDigest(base.tree, {
    bigintStats: true,
    onEntry: (relativePath, kind, info) => {
      const segments = relativePath.split("/");
      // Any kind counts (a file or a link named skills is removed too); symbolic links to
      // folders are never followed, by the walk here or by the clean-up.
      if (segments.at(-1) === "skills" && agentFolderNames.has(segments.at(-2) ?? "")) {
        mayHoldSkillFolders = true;
      }
      if (info === undefined) return;
      entries.push(stampEntry(relativePath, kind, info));
      if (ctimeIsRacy(info, startedNs, racyMarginMs)) racy = true;
    },
  });
  if (digest !== base.digest) {
    throw new InfrastructureError(
      "env.base-changed",
      `the prepared base ${base.tree} changed since it was prepared (digest ${base.digest} recorded, ${digest} now); remove ${base.root} so the next run prepares it again`,
      { data: { recorded: base.digest, actual: digest, base: base.root } },
    );
  }
  if (!racy) await writeStamp(base, { format: STAMP_FORMAT, digest, mayHoldSkillFolders, entries });
  return { digest, mayHoldSkillFolders, source: "walk" };
}

function ctimeIsRacy(info: BigIntStats, startedNs: bigint, racyMarginMs: number): boolean {
  return info.ctimeNs >= startedNs - BigInt(racyMarginMs) * 1_000_000n;
}

/** One entry as the stamp holds it; the path last, so a space in it cannot shift a field. */
function stampEntry(relativePath: string, kind: TreeEntryKind, info: BigIntStats): string {
  const mode = (info.mode & 0o7777n).toString(8);
  return `${kind} ${mode} ${info.size} ${info.ino} ${info.mtimeNs} ${info.ctimeNs} ${relativePath}`;
}

function entryKind(info: BigIntStats): TreeEntryKind {
  if (info.isSymbolicLink()) return "link";
  if (info.isDirectory()) return "dir";
  if (info.isFile()) return "file";
  return "special";
}

/**
 * Whether the tree's entries, walked in `treeDigest`'s order (code-unit sorted names, depth
 * first, links not followed), equal the stamp's one for one. Only `lstat` and `readdir`: no file
 * is read. A folder vanishing mid-walk is a difference, not an error.
 */
function matchesStamp(tree: string, stamp: z.infer<typeof stampSchema>): boolean {
  try {
    let index = 0;
    const next = (relativePath: string, info: BigIntStats): boolean =>
      stamp.entries[index++] === stampEntry(relativePath, entryKind(info), info);
    if (!next("", lstatSync(tree, { bigint: true }))) return false;
    for (const { relativePath, info } of treeEntries(tree, { bigint: true })) {
      if (!next(relativePath, info as BigIntStats)) return false;
    }
    return index === stamp.entries.length;
  } catch {
    return false;
  }
}

async function readStamp(base: PreparedBase): Promise<z.infer<typeof stampSchema> | undefined> {
  let text: string;
  try {
    text = await readFile(join(base.root, STAMP_FILE), "utf8");
  } catch {
    // Missing or unreadable: the stamp only saves a walk, so its absence is never an error.
    return undefined;
  }
  const parsed = parseJsonResult(stampSchema, text);
  return parsed.ok ? parsed.value : undefined;
}

/**
 * Atomic (temporary sibling, then rename), so a reader sees the old stamp or the new one, never
 * half of one. A cache the process may not write to just goes unstamped.
 */
async function writeStamp(base: PreparedBase, stamp: z.infer<typeof stampSchema>): Promise<void> {
  await writeFileAtomic(join(base.root, STAMP_FILE), JSON.stringify(stamp)).catch(() => undefined);
}

/**
 * `materialiseWorkspace` from a verified base: the skill-folder clean-up runs only when the
 * base may hold skill folders (it would remove nothing otherwise).
 */
export async function materialiseVerified(
  base: PreparedBase,
  options: MaterialiseOptions = {},
): Promise<Workspace> {
  const { mayHoldSkillFolders } = await verifyBase(base);
  const clean = options.cleanSkillFolders !== false && mayHoldSkillFolders;
  return materialiseWorkspace(base, { ...options, cleanSkillFolders: clean });
}

/**
 * `treeDigest(workspace.path)` of a workspace as `materialiseWorkspace` handed it out (before
 * anything ran in it): the verified base digest when materialisation removed nothing, else a
 * hash of the workspace itself.
 */
export async function freshWorkspaceDigest(workspace: Workspace): Promise<string> {
  const { digest } = await verifyBase(workspace.base);
  if (workspace.removedSkillFolders.length === 0) return digest;
  return treeDigest(workspace.path);
}
