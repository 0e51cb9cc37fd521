/**
 * The skills lock file: which skill came from which git source at which commit, with a hash of
 * its content, so that `skill check` can tell a local edit from an upstream update and `skill
 * update` can re-pin. Format `skillsmith-skills-lock/1` (earlier versions wrote the name and the
 * version apart, `format: "skillsmith-skills-lock", version: 1`, still read), documented in
 * README.md here.
 * Like the vercel `skills` CLI's lock it is keyed by skill name and records the source, its URL
 * and the path inside the repository; unlike it, it pins a commit and hashes the installed files
 * ourselves rather than trusting a hosting service's tree id.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { formatTag } from "../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../core/format-tag-schema.js";
import { writeFileAtomic } from "../core/fs.js";
import { fieldPrefix, parseInput } from "../core/parse.js";

export const LOCK_VERSION = 1;
export const LOCK_FORMAT = formatTag("skills-lock", LOCK_VERSION);
/** How versions before the one tag convention spelled it: the name and the version apart. */
const OLDER_LOCK_NAME = "skillsmith-skills-lock";
/** In a project: committed beside the code, like any lock file. */
export const PROJECT_LOCK_FILE = "skillsmith-lock.json";

const entrySchema = z.object({
  source: z.string().min(1),
  url: z.string().min(1),
  ref: z.string().nullable(),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  path: z.string(),
  contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  agents: z.array(z.string().min(1)).min(1),
  mode: z.enum(["copy", "symlink"]),
  installedAt: z.string(),
  updatedAt: z.string(),
});

const currentLockSchema = z.object({
  format: formatTagSchema(LOCK_FORMAT),
  skills: z.record(z.string(), entrySchema),
});

const lockSchema = readingOlderTags(currentLockSchema, LOCK_FORMAT, [
  { style: "name-and-version", format: OLDER_LOCK_NAME, version: LOCK_VERSION },
]);

export type LockEntry = z.infer<typeof entrySchema>;
export type SkillsLock = z.infer<typeof currentLockSchema>;

export function emptyLock(): SkillsLock {
  return { format: LOCK_FORMAT, skills: {} };
}

/** The global lock: `$XDG_STATE_HOME/skillsmith/skills-lock.json` (default `~/.local/state`). */
export function globalLockFile(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const state = env.XDG_STATE_HOME?.trim();
  return join(
    state === undefined || state === "" ? join(home, ".local", "state") : state,
    "skillsmith",
    "skills-lock.json",
  );
}

/** Read a lock file; a missing one is empty, a damaged or foreign one is an `InputError`. */
export async function readLock(path: string): Promise<SkillsLock> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyLock();
    throw new InputError(
      "skill.lock-unreadable",
      `cannot read the lock file: ${(error as Error).message}`,
      { file: path },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      "skill.lock-not-json",
      `the lock file is not JSON: ${(error as Error).message}`,
      { file: path },
    );
  }
  // A later lock written in the older style: say so rather than "not a lock file".
  const older = value as { format?: unknown; version?: unknown } | null;
  const version = older?.format === OLDER_LOCK_NAME ? older.version : undefined;
  if (typeof version === "number" && version > LOCK_VERSION)
    throw new InputError(
      "skill.lock-newer",
      `the lock file is version ${version}; this skillsmith reads version ${LOCK_VERSION} (upgrade skillsmith)`,
      { file: path, field: "version" },
    );
  return parseInput(lockSchema, value, {
    code: "skill.lock-invalid",
    location: { file: path },
    describe: (problem) => `not a ${LOCK_FORMAT} file: ${fieldPrefix(problem)}${problem.message}`,
  });
}

export async function writeLock(path: string, lock: SkillsLock): Promise<void> {
  const sorted: SkillsLock = {
    ...lock,
    skills: Object.fromEntries(
      Object.entries(lock.skills).sort(([left], [right]) => (left < right ? -1 : 1)),
    ),
  };
  await writeFileAtomic(path, `${JSON.stringify(sorted, null, 2)}\n`);
}
