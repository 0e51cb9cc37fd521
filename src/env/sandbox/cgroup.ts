import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync } from "node:fs";
import { mkdir, readdir, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readSystemFile, readSystemFileSync } from "../system-file.js";

/**
 * Resource limits through cgroups, written directly under /sys/fs/cgroup (no systemd needed).
 * Root cannot be limited with RLIMIT_NPROC (root bypasses it, and it counts every process of the
 * user anyway), so a cgroup is the only way to cap processes and memory of one sandbox precisely.
 * Both layouts are supported: cgroup v2 (one unified tree, controllers enabled in the parent's
 * `cgroup.subtree_control`) and v1 (one tree per controller: memory, pids, cpu).
 */

export type CgroupLayout =
  | { readonly version: 2; readonly parent: string }
  | {
      readonly version: 1;
      readonly memory?: string;
      readonly pids?: string;
      readonly cpu?: string;
    };

export interface CgroupLimits {
  readonly memoryBytes?: number;
  readonly maxProcesses?: number;
  readonly cpus?: number;
}

const ROOT = "/sys/fs/cgroup";
const GROUP_PREFIX = "skillsmith-";

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    // A probe: whatever the reason (missing, read-only, not ours), we cannot make groups there,
    // and the layout says so (the sandbox then reports the limits it cannot enforce).
    return false;
  }
}

let cachedLayout: CgroupLayout | null | undefined;

/**
 * Which cgroup layout we can write to, or null when none (unprivileged user, read-only cgroupfs).
 * v2: our own group's parent must delegate the memory and pids controllers. v1: each controller
 * tree must be writable at the group this process lives in.
 */
export function detectCgroupLayout(): CgroupLayout | null {
  if (cachedLayout !== undefined) return cachedLayout;
  cachedLayout = probeLayout();
  return cachedLayout;
}

function probeLayout(): CgroupLayout | null {
  if (existsSync(join(ROOT, "cgroup.controllers"))) {
    const own = ownGroups().get("") ?? "/";
    // "No internal processes": a group holding processes (ours) cannot enable controllers for
    // children, so sandboxes become siblings under our parent, which already delegates them.
    // The root group is exempt, so there they are our children.
    const base = own === "/" ? ROOT : join(ROOT, own, "..");
    const controllers = readSystemFileSync(join(base, "cgroup.subtree_control")) ?? "";
    if (controllers.includes("memory") && controllers.includes("pids") && writable(base)) {
      return { version: 2, parent: base };
    }
    return null;
  }
  const groups = ownGroups();
  const pick = (controller: string): string | undefined => {
    const tree = join(ROOT, controller);
    if (!existsSync(join(tree, "cgroup.procs"))) return undefined;
    const path = join(tree, groups.get(controller) ?? "/");
    return writable(path) ? path : undefined;
  };
  const memory = pick("memory");
  const pids = pick("pids");
  const cpu = pick("cpu");
  if (memory === undefined && pids === undefined) return null;
  return {
    version: 1,
    ...(memory === undefined ? {} : { memory }),
    ...(pids === undefined ? {} : { pids }),
    ...(cpu === undefined ? {} : { cpu }),
  };
}

/** controller name ("" for v2) → this process's group path, from /proc/self/cgroup. */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  const text = readSystemFileSync("/proc/self/cgroup") ?? "";
  for (const line of text.split("\n")) {
    const [, controllers, path] = line.split(":");
    if (controllers === undefined || path === undefined) continue;
    for (const controller of controllers.split(",")) groups.set(controller, path);
  }
  return groups;
}

/** One sandbox's cgroup(s): create, enter (by pid), query OOM kills, kill all, remove. */
export class SandboxCgroup {
  private constructor(
    private readonly layout: CgroupLayout,
    /** Every group folder we created (one for v2, one per controller for v1). */
    readonly folders: readonly string[],
    private readonly memoryFolder: string | undefined,
    private readonly pidsFolder: string | undefined,
  ) {}

  static async create(layout: CgroupLayout, limits: CgroupLimits): Promise<SandboxCgroup> {
    await sweepStaleGroups(layout);
    const name = `${GROUP_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`;
    if (layout.version === 2) {
      const folder = join(layout.parent, name);
      await mkdir(folder);
      const group = new SandboxCgroup(layout, [folder], folder, folder);
      try {
        if (limits.memoryBytes !== undefined) {
          await writeFile(join(folder, "memory.max"), String(limits.memoryBytes));
          await writeOptional(join(folder, "memory.swap.max"), "0");
        }
        if (limits.maxProcesses !== undefined) {
          await writeFile(join(folder, "pids.max"), String(limits.maxProcesses));
        }
        if (limits.cpus !== undefined) {
          const period = 100_000;
          await writeOptional(
            join(folder, "cpu.max"),
            `${Math.max(1_000, Math.round(limits.cpus * period))} ${period}`,
          );
        }
      } catch (error) {
        await group.destroy();
        throw error;
      }
      return group;
    }
    const folders: string[] = [];
    let memoryFolder: string | undefined;
    let pidsFolder: string | undefined;
    const group = () => new SandboxCgroup(layout, folders, memoryFolder, pidsFolder);
    try {
      if (layout.memory !== undefined) {
        memoryFolder = join(layout.memory, name);
        await mkdir(memoryFolder);
        folders.push(memoryFolder);
        if (limits.memoryBytes !== undefined) {
          await writeFile(join(memoryFolder, "memory.limit_in_bytes"), String(limits.memoryBytes));
          // Memory + swap equal to memory: the workload cannot escape the limit into swap.
          await writeOptional(
            join(memoryFolder, "memory.memsw.limit_in_bytes"),
            String(limits.memoryBytes),
          );
        }
      }
      if (layout.pids !== undefined) {
        const folder = join(layout.pids, name);
        await mkdir(folder);
        folders.push(folder);
        pidsFolder = folder;
        if (limits.maxProcesses !== undefined) {
          await writeFile(join(folder, "pids.max"), String(limits.maxProcesses));
        }
      }
      if (layout.cpu !== undefined && limits.cpus !== undefined) {
        const folder = join(layout.cpu, name);
        await mkdir(folder);
        folders.push(folder);
        const period = 100_000;
        await writeFile(join(folder, "cpu.cfs_period_us"), String(period));
        await writeFile(
          join(folder, "cpu.cfs_quota_us"),
          String(Math.max(1_000, Math.round(limits.cpus * period))),
        );
      }
    } catch (error) {
      await group().destroy();
      throw error;
    }
    return group();
  }

  /** Which limits this layout can enforce (a v1 machine may lack the pids or cpu tree). */
  static enforces(layout: CgroupLayout): { memory: boolean; processes: boolean; cpu: boolean } {
    if (layout.version === 2) return { memory: true, processes: true, cpu: true };
    return {
      memory: layout.memory !== undefined,
      processes: layout.pids !== undefined,
      cpu: layout.cpu !== undefined,
    };
  }

  /** The `cgroup.procs` files a process writes its pid into to enter every group. */
  get procsFiles(): string[] {
    return this.folders.map((folder) => join(folder, "cgroup.procs"));
  }

  /** How many times the kernel's OOM killer struck inside this group. */
  async oomKills(): Promise<number> {
    if (this.memoryFolder === undefined) return 0;
    const file = this.layout.version === 2 ? "memory.events" : "memory.oom_control";
    const text = (await readSystemFile(join(this.memoryFolder, file))) ?? "";
    const match = /^oom_kill (\d+)$/m.exec(text);
    return match?.[1] === undefined ? 0 : Number(match[1]);
  }

  /** How many times a fork or clone failed because the group was at its process limit. */
  async processLimitHits(): Promise<number> {
    if (this.pidsFolder === undefined) return 0;
    const text = (await readSystemFile(join(this.pidsFolder, "pids.events"))) ?? "";
    const match = /^max (\d+)$/m.exec(text);
    return match?.[1] === undefined ? 0 : Number(match[1]);
  }

  async pids(): Promise<number[]> {
    const pids = new Set<number>();
    for (const folder of this.folders) {
      // Missing: the group is gone already (destroy may run twice), so it holds no process.
      const text = (await readSystemFile(join(folder, "cgroup.procs"))) ?? "";
      for (const line of text.split("\n")) if (line.trim() !== "") pids.add(Number(line));
    }
    return [...pids];
  }

  /**
   * SIGKILL everything still in the group until it is empty (a process may fork while we read
   * the list), then remove the folders. Safe to call twice.
   */
  async destroy(): Promise<void> {
    for (let round = 0; round < 50; round += 1) {
      const pids = await this.pids();
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const folder of this.folders) {
      // rmdir fails with EBUSY for a moment after the last process died; retry briefly.
      for (let attempt = 0; attempt < 50; attempt += 1) {
        try {
          await rmdir(folder);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }
  }
}

let swept = false;

/**
 * Remove empty groups left by skillsmith processes that died before cleaning up (a crash, a
 * SIGKILL). Once per process; a group still holding processes cannot be removed and is left.
 */
async function sweepStaleGroups(layout: CgroupLayout): Promise<void> {
  if (swept) return;
  swept = true;
  const parents =
    layout.version === 2
      ? [layout.parent]
      : [layout.memory, layout.pids, layout.cpu].filter((path) => path !== undefined);
  for (const parent of parents) {
    // Best-effort cleanup of other processes' leftovers: a parent we cannot list or a group we
    // cannot remove (still busy, raced by another sweeper) only leaves an empty folder behind,
    // and never touches this run's own group.
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) {
      const owner = new RegExp(`^${GROUP_PREFIX}(\\d+)-`).exec(name)?.[1];
      if (owner === undefined || isAlive(Number(owner))) continue;
      await rmdir(join(parent, name)).catch(() => undefined);
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function writeOptional(path: string, value: string): Promise<void> {
  // Optional knobs (swap accounting, cpu controller) are absent on some kernels; the limit that
  // matters is still set, so a missing file is not an error. cgroupfs answers a write to a
  // knob that does not exist with EACCES, not ENOENT (seen on this machine's v1 tree), so
  // every failure here means absent. The limits that decide flags (memory.max, pids.max) are
  // written with plain `writeFile` and do throw.
  await writeFile(path, value).catch(() => undefined);
}
