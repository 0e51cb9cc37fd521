import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Write a file so that readers see either the old content or the new, never a half-written
 * file: write to a temporary sibling, then rename over the target (atomic on one filesystem).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, content);
    await rename(temporary, path);
  } catch (error) {
    // Name the file the caller meant (not the temporary sibling), also where Node names none
    // (a write that ran out of space): error messages must say which file could not be written.
    if (error !== null && typeof error === "object") (error as { path?: string }).path = path;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}
