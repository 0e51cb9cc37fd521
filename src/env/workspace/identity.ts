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
 */
import { InfrastructureError } from "../../core/errors.js";
import { AGENT_SKILL_DIRECTORIES } from "../../skill/install.js";
import type { PreparedBase } from "./base.js";
import { treeDigest } from "./digest.js";
import { type MaterialiseOptions, materialiseWorkspace, type Workspace } from "./materialise.js";

export interface VerifiedBase {
  /** `treeDigest` of the base's tree, equal to the digest recorded at preparation. */
  readonly digest: string;
  /** Whether an entry named `skills` sits directly in an agent folder somewhere in the tree. */
  readonly mayHoldSkillFolders: boolean;
}

const agentFolderNames: ReadonlySet<string> = new Set(
  AGENT_SKILL_DIRECTORIES.map((relativePath) => relativePath.split("/")[0] ?? ""),
);

const verified = new Map<string, Promise<VerifiedBase>>();

/**
 * The base's tree, walked once per process per base: its digest (compared with the recorded
 * one; a difference throws an `InfrastructureError`, `env.base-changed`) and whether it may hold
 * agent-skill folders. A failed check is not remembered: the next call walks again.
 */
export function verifyBase(base: PreparedBase): Promise<VerifiedBase> {
  const key = `${base.tree}\0${base.digest}`;
  let result = verified.get(key);
  if (result === undefined) {
    result = walkBase(base);
    verified.set(key, result);
    result.catch(() => verified.delete(key));
  }
  return result;
}

async function walkBase(base: PreparedBase): Promise<VerifiedBase> {
  let mayHoldSkillFolders = false;
  const digest = await treeDigest(base.tree, {
    onEntry: (relativePath) => {
      const segments = relativePath.split("/");
      // Any kind counts (a file or a link named skills is removed too); symbolic links to
      // folders are never followed, by the walk here or by the clean-up.
      if (segments.at(-1) === "skills" && agentFolderNames.has(segments.at(-2) ?? "")) {
        mayHoldSkillFolders = true;
      }
    },
  });
  if (digest !== base.digest) {
    throw new InfrastructureError(
      "env.base-changed",
      `the prepared base ${base.tree} changed since it was prepared (digest ${base.digest} recorded, ${digest} now); remove ${base.root} so the next run prepares it again`,
      { data: { recorded: base.digest, actual: digest, base: base.root } },
    );
  }
  return { digest, mayHoldSkillFolders };
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
