/**
 * BullMQ, an optional peer dependency: only queue runs load it. In a module of its own, which no
 * public module re-exports, so the package's declarations never name bullmq (a user without it
 * type-checks them with skipLibCheck: false).
 */
import { importOptional } from "../../core/optional.js";

export function loadBullmq(): Promise<typeof import("bullmq")> {
  return importOptional("bullmq", "queue runs (bench run --queue, bench worker)");
}
