import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The folder holding prepared bases and run workspaces: `SKILLSMITH_CACHE_DIR` when set, else
 * `~/.cache/skillsmith`. Bases live in `bases/`, workspaces in `workspaces/` on the same
 * filesystem, so copy-on-write and overlay materialisation can work.
 */
export function defaultCacheDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const configured = env.SKILLSMITH_CACHE_DIR;
  if (configured !== undefined && configured !== "") return resolve(configured);
  return join(homedir(), ".cache", "skillsmith");
}
