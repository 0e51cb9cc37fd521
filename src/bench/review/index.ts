/** Layer 7's review of suspicious runs (patch-scan findings only): `skillsmith bench review`. */

export { heldVerdictLabel, reviewLines } from "./render.js";
export {
  applyRejections,
  emptyReview,
  REVIEW_FILE,
  REVIEW_FORMAT,
  type ReviewDecision,
  type ReviewFile,
  type ReviewStatus,
  readReview,
  type SuspiciousRun,
  scanEvidence,
  suspiciousRuns,
} from "./review.js";
export { decideRunDir, holdVerdicts, reviewRunDir } from "./verdicts.js";
