/**
 * The inventories a check or a run is about to need, taken ahead in batches: every pending
 * verifier that shares a sandbox, an image, an untouched tree, limits and an interpreter is
 * collected in one sandboxed process (`env`'s `takeInventoryBatch`: one interpreter importing
 * pytest once, one forked child per verifier), instead of one process each. The answers go into
 * the same in-process memo and on-disk cache `suiteVerifierInventory` reads, under the same keys,
 * so the check and the runs find them there; a verifier the batch cannot answer for certain is
 * left to `suiteVerifierInventory`, which takes it alone as before, and the reason is returned.
 *
 * Each verifier of a batch is mounted at `BATCH_ROOT/<i><its mount path>` (they usually share
 * `/verifier`), with the layout `verifierLayout` gives it there, so its `verifier:…` paths read
 * the same. After the batch the untouched workspace must still be untouched (an overlay's upper
 * layer empty, else its digest unchanged): a verifier that wrote into it during collection could
 * have changed what a later one collected, so then every answer of the batch is dropped.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import {
  BATCH_ROOT,
  type BatchJob,
  bytecodeCacheOption,
  freshWorkspaceDigest,
  materialiseVerified,
  type PlainPytestCommand,
  type PreparedBase,
  plainPytestCommand,
  readJunitReports,
  type SandboxV1,
  takeInventoryBatch,
  treeDigest,
  type VerifierInventory,
} from "../../env/index.js";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { cachedInventory, inventoryCacheKey, keptInventory } from "./inventory-cache.js";
import {
  inventories,
  inventoryKey,
  requirementVerifierTarget,
  type SuiteVerifierTarget,
  takeSuiteInventory,
  untouchedWorkspace,
} from "./verifier.js";
import { defaultTimeoutMs, verifierLayout, within } from "./verifier-layout.js";

export interface InventoryBatchReport {
  /** Verifiers whose inventory was already taken (this process) or kept (on disk). */
  readonly known: number;
  /** Verifiers answered by a batch. */
  readonly batched: number;
  /** Batches run (sandbox processes started). */
  readonly batches: number;
  /** Verifiers left to be taken alone, and why. */
  readonly alone: readonly { readonly verifier: string; readonly reason: string }[];
}

interface Member {
  readonly target: SuiteVerifierTarget;
  readonly key: string;
  readonly command: PlainPytestCommand;
}

/** Why `target` cannot join a batch, or its command. */
function batchable(target: SuiteVerifierTarget): PlainPytestCommand | string {
  const { verifier } = target;
  if (target.sandbox.kind === "unsafe") return "the unsafe sandbox has no mounts to move it";
  if (target.untouched === undefined) return "no untouched workspace";
  if (verifier.scoring === "reward" || verifier.rewardFile !== undefined) {
    return "a reward-scored verifier";
  }
  if (
    within(verifier.mountPath, target.workspaceMountPath) !== undefined ||
    within(target.workspaceMountPath, verifier.mountPath) !== undefined
  ) {
    return "its mount path and the workspace's overlap";
  }
  if (within(verifier.cwd, verifier.mountPath) === undefined) {
    return "its working folder is outside its own folder";
  }
  if (
    verifier.junit !== undefined &&
    posix.isAbsolute(verifier.junit) &&
    within(verifier.junit, verifier.mountPath) === undefined
  ) {
    return "its JUnit file is outside its own folder";
  }
  return plainPytestCommand(verifier.command);
}

/** What must be equal for two verifiers to share a batch process. */
function groupKey(target: SuiteVerifierTarget, command: PlainPytestCommand): string {
  return JSON.stringify([
    target.image ?? "",
    target.user ?? null,
    target.untouched?.digest,
    target.untouched?.cache?.environment ?? "",
    target.workspaceMountPath,
    command.interpreter,
    target.memoryBytes ?? null,
    target.maxProcesses ?? null,
    target.cpus ?? null,
  ]);
}

function label(target: SuiteVerifierTarget): string {
  return `${target.verifier.folder}: ${target.verifier.command}`;
}

/**
 * Take ahead, in batches, the inventories of `targets` not yet taken or kept. Resolves when the
 * batches are done; a failed batch leaves its verifiers to be taken alone (never throws for it).
 */
export async function prefetchInventories(
  targets: readonly SuiteVerifierTarget[],
): Promise<InventoryBatchReport> {
  let known = 0;
  const alone: { verifier: string; reason: string }[] = [];
  const groups = new Map<SandboxV1, Map<string, Member[]>>();
  const seen = new Set<string>();
  for (const target of targets) {
    const key = await inventoryKey(target);
    if (seen.has(key)) continue;
    seen.add(key);
    if (inventories.has(key)) {
      known += 1;
      continue;
    }
    const scope = target.untouched?.cache;
    if (scope !== undefined) {
      const kept = await keptInventory(scope, await inventoryCacheKey(scope, key));
      if (kept !== undefined) {
        known += 1;
        void inventories.get(key, async () => kept);
        continue;
      }
    }
    const command = batchable(target);
    if (typeof command === "string") {
      alone.push({ verifier: label(target), reason: command });
      continue;
    }
    const bySandbox = groups.get(target.sandbox) ?? new Map<string, Member[]>();
    groups.set(target.sandbox, bySandbox);
    const group = groupKey(target, command);
    bySandbox.set(group, [...(bySandbox.get(group) ?? []), { target, key, command }]);
  }
  let batched = 0;
  let batches = 0;
  for (const bySandbox of groups.values()) {
    for (const members of bySandbox.values()) {
      if (members.length < 2) {
        // One verifier alone costs what a batch of one does.
        for (const member of members) {
          alone.push({ verifier: label(member.target), reason: "no other verifier to batch with" });
        }
        continue;
      }
      batches += 1;
      const answers = runBatch(members);
      // Registered before the batch ends: a caller asking meanwhile waits for its answer.
      const settled = members.map((member, index) =>
        inventories.get(member.key, () => {
          const take = async (): Promise<VerifierInventory> => {
            const answer = (await answers)[index];
            if (answer?.kind === "taken") return answer.inventory;
            return takeSuiteInventory(member.target);
          };
          const scope = member.target.untouched?.cache;
          if (scope === undefined) return take();
          return inventoryCacheKey(scope, member.key).then((cacheKey) =>
            cachedInventory(scope, cacheKey, take),
          );
        }),
      );
      const results = await answers;
      for (const [index, answer] of results.entries()) {
        const member = members[index] as Member;
        if (answer.kind === "taken") batched += 1;
        else alone.push({ verifier: label(member.target), reason: answer.reason });
      }
      // The members taken alone are taken by their first caller, not here.
      void Promise.allSettled(settled);
    }
  }
  return { known, batched, batches, alone };
}

/** One batch: the members' inventories, or why each must be taken alone. */
async function runBatch(
  members: readonly Member[],
): Promise<
  readonly ({ kind: "taken"; inventory: VerifierInventory } | { kind: "alone"; reason: string })[]
> {
  const first = (members[0] as Member).target;
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-inventory-batch-"));
  let workspace:
    | { readonly path: string; readonly upperLayer?: string; dispose(): Promise<unknown> }
    | undefined;
  try {
    workspace = await first.untouched?.materialise();
    if (workspace === undefined) throw new Error("no untouched workspace");
    const untouchedPath = workspace.path;
    const jobs: BatchJob[] = [];
    for (const [index, member] of members.entries()) {
      const { verifier } = member.target;
      const movedRoot = `${BATCH_ROOT}/${index}${verifier.mountPath}`;
      const moved = (path: string) => `${BATCH_ROOT}/${index}${path}`;
      const place = await verifierLayout(
        {
          ...member.target,
          verifier: {
            ...verifier,
            mountPath: movedRoot,
            cwd: moved(verifier.cwd),
            ...(verifier.junit !== undefined && posix.isAbsolute(verifier.junit)
              ? { junit: moved(verifier.junit) }
              : {}),
          },
        },
        untouchedPath,
        join(scratch, String(index)),
      );
      const ownAncestors: string[] = [];
      for (let folder = posix.dirname(verifier.mountPath); folder !== "/"; ) {
        ownAncestors.push(folder);
        folder = posix.dirname(folder);
      }
      jobs.push({
        command: member.command,
        movedRoot,
        ownRoot: verifier.mountPath,
        cwd: place.cwd,
        timeoutMs: (verifier.timeoutSeconds ?? defaultTimeoutMs / 1000) * 1000,
        env: { SKILLSMITH_VERIFIER: movedRoot },
        mounts: place.mounts,
        ownAncestors,
        readJunit: async () => {
          const host = place.junitHost();
          return host === undefined ? undefined : readJunitReports(host);
        },
        verifierFile: (path) => place.verifierFile(path),
        locate: (path) => place.locate(path),
      });
    }
    const bytecode = await bytecodeCacheOption(first);
    const answers = await takeInventoryBatch({
      jobs,
      interpreter: (members[0] as Member).command.interpreter,
      ...bytecode,
      execute: (request) =>
        first.sandbox.exec({
          command: request.command,
          workspace: untouchedPath,
          workspaceMountPath: first.workspaceMountPath,
          network: "none",
          env: request.env,
          limits: {
            timeoutMs: request.timeoutMs,
            ...(first.memoryBytes === undefined ? {} : { memoryBytes: first.memoryBytes }),
            ...(first.maxProcesses === undefined ? {} : { maxProcesses: first.maxProcesses }),
            ...(first.cpus === undefined ? {} : { cpus: first.cpus }),
          },
          extraMounts: request.mounts,
          ...(first.image === undefined ? {} : { image: first.image }),
          ...(first.user === undefined ? {} : { user: first.user }),
          ...(first.signal === undefined ? {} : { signal: first.signal }),
        }),
    });
    const changed = await workspaceChanged(workspace, first.untouched?.digest);
    if (changed !== undefined) {
      return members.map(() => ({ kind: "alone" as const, reason: changed }));
    }
    return answers;
  } catch (error) {
    const reason = `the batch failed: ${error instanceof Error ? error.message : String(error)}`;
    return members.map(() => ({ kind: "alone" as const, reason }));
  } finally {
    await workspace?.dispose().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Why the untouched workspace is no longer untouched after the batch, if it is not. */
async function workspaceChanged(
  workspace: { readonly path: string; readonly upperLayer?: string },
  digest: string | undefined,
): Promise<string | undefined> {
  if (workspace.upperLayer !== undefined) {
    const written = await readdir(workspace.upperLayer);
    return written.length === 0
      ? undefined
      : `a verifier of the batch wrote into the untouched workspace (${written.slice(0, 3).join(", ")})`;
  }
  return (await treeDigest(workspace.path)) === digest
    ? undefined
    : "a verifier of the batch changed the untouched workspace";
}

/**
 * The inventory targets of requirements in their skills' prepared environments, exactly as
 * `verifyCandidate` and the runs build them (same untouched tree and mount path, so the same
 * keys): one fresh workspace per environment tells its mount path and digest.
 */
export async function requirementInventoryTargets(
  entries: readonly {
    readonly skill: SuiteSkill;
    readonly requirement: SuiteRequirement;
    readonly sandbox: SandboxV1;
    readonly base: PreparedBase;
  }[],
  signal?: AbortSignal,
): Promise<SuiteVerifierTarget[]> {
  const fresh = new Map<PreparedBase, { mountPath: string; digest: string }>();
  const targets: SuiteVerifierTarget[] = [];
  for (const entry of entries) {
    let known = fresh.get(entry.base);
    if (known === undefined) {
      const workspace = await materialiseVerified(entry.base);
      try {
        known = { mountPath: workspace.mountPath, digest: await freshWorkspaceDigest(workspace) };
      } finally {
        await workspace.dispose().catch(() => undefined);
      }
      fresh.set(entry.base, known);
    }
    targets.push({
      ...requirementVerifierTarget({
        sandbox: entry.sandbox,
        skill: entry.skill,
        requirement: entry.requirement,
        base: entry.base,
        workspaceMountPath: known.mountPath,
        ...(signal === undefined ? {} : { signal }),
      }),
      untouched: untouchedWorkspace(entry.base, known.digest),
    });
  }
  return targets;
}
