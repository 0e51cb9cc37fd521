import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../../core/format-tag-schema.js";
import { type ParseProblem, parseJsonResult } from "../../core/parse.js";
import type { Result } from "../../core/result.js";

/**
 * Who made a materialised workspace: written into its holder folder before anything is mounted
 * there, so a workspace whose process died (SIGKILL, a crash, a lost container) can be told apart
 * from one still in use and swept. Holders without this file are never swept (kept workspaces,
 * folders of older versions, anything we did not make).
 */
export const OWNER_FILE = ".skillsmith-owner.json";
/** The owner file's tag; records of earlier versions have none. */
export const OWNER_FORMAT = formatTag("workspace-owner", 1);

export interface WorkspaceOwner {
  readonly pid: number;
  readonly host: string;
  /**
   * The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a pid
   * reused by a later process is not taken for the owner. Absent where /proc is not readable.
   */
  readonly startTicks?: string;
  readonly since: string;
}

/** Fields 3 onwards of `/proc/<pid>/stat`, or undefined when the process or /proc is not there. */
function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    // Absent (the process is gone, no /proc) or hidden from us (hidepid): either way we learn
    // nothing, and every caller takes that as "cannot tell", which `ownerIsGone` reads as alive.
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ")".
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Field 22 of `/proc/<pid>/stat` (start time), or undefined when it cannot be read. */
export function processStartTicks(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

export async function writeOwner(holder: string): Promise<void> {
  const startTicks = processStartTicks(process.pid);
  const owner: WorkspaceOwner = {
    pid: process.pid,
    host: hostname(),
    ...(startTicks === undefined ? {} : { startTicks }),
    since: new Date().toISOString(),
  };
  await writeFile(
    join(holder, OWNER_FILE),
    `${JSON.stringify({ format: OWNER_FORMAT, ...owner })}\n`,
  );
}

const ownerSchema = readingOlderTags(
  z.object({
    format: formatTagSchema(OWNER_FORMAT),
    pid: z.number().int().positive(),
    host: z.string(),
    startTicks: z.string().exactOptional(),
    // Records of early versions had no time; it is only shown, never decided on.
    since: z.string().default(""),
  }),
  OWNER_FORMAT,
  [{ style: "none" }],
);

/** An owner record's text through its schema: the owner, or which field is wrong. */
export function parseOwner(text: string): Result<WorkspaceOwner, ParseProblem> {
  const parsed = parseJsonResult(ownerSchema, text);
  if (!parsed.ok) return parsed;
  const { format: _format, ...owner } = parsed.value;
  return { ok: true, value: owner };
}

/** The owner recorded in `holder`, or undefined when there is no readable, well-formed record. */
export async function readOwner(holder: string): Promise<WorkspaceOwner | undefined> {
  // A record that is absent, unreadable, malformed or foreign reads as "no record", and a holder
  // without one is never swept: every failure here keeps a folder rather than removing one in use.
  const text = await readFile(join(holder, OWNER_FILE), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseOwner(text);
  return parsed.ok ? parsed.value : undefined;
}

/**
 * True only when the owner is certainly gone: it ran on this host and its pid is free, or now
 * belongs to a process started at another time. An owner on another host (a shared cache) or
 * a process we may not signal (EPERM) counts as alive.
 */
export function ownerIsGone(owner: WorkspaceOwner): boolean {
  if (owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  const fields = statFields(owner.pid);
  // A killed process its parent has not reaped yet still answers signal 0, as a zombie.
  if (fields?.[0] === "Z") return true;
  if (owner.startTicks === undefined) return false;
  const now = fields?.[19];
  return now !== undefined && now !== owner.startTicks;
}
