import { posix } from "node:path";

/** `/workspace//calc/` → `/workspace/calc`: one spelling per path, for mounts and cache keys. */
export function normalizeMountPath(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 ? normalized.replace(/\/+$/, "") : normalized;
}
