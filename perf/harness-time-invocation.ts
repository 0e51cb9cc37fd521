/**
 * One `bench run` of the harness-time benchmark in a process of its own (`harness-time.bench.ts`
 * starts it), so the in-process inventory memo starts empty as in a real invocation: what one
 * invocation finds is only what the cache on disk holds. Prints one JSON line: the wall time of
 * `runSuite`, the time the check spent running verifiers, and every stored run's figures.
 *
 * Usage: node --import tsx perf/harness-time-invocation.ts '<{"suite","predictions","runDir","cacheDir","sandbox"}>'
 */
import { openSandbox } from "../src/bench/run/prepare.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";

const input = JSON.parse(process.argv[2] ?? "{}") as {
  suite: string;
  predictions: string;
  runDir: string;
  cacheDir: string;
  sandbox: "local" | "unsafe";
};
const sandbox = await openSandbox(input.sandbox);
try {
  const started = performance.now();
  const summary = await runSuite({
    suite: input.suite,
    predictions: input.predictions,
    runDir: input.runDir,
    cacheDir: input.cacheDir,
    sandbox,
  });
  const wallMs = performance.now() - started;
  // The check's own verifier runs are verifier time (cached ones ran nothing).
  const checkVerifierMs = (summary.check?.requirements ?? [])
    .filter((requirement) => !requirement.cached)
    .reduce(
      (sum, requirement) =>
        sum + (requirement.untouched?.durationMs ?? 0) + (requirement.reference?.durationMs ?? 0),
      0,
    );
  const store = ResultsStore.openReadOnly(input.runDir);
  try {
    const runs = store.results().map((result) => ({
      totalMs: result.totalMs,
      agentMs: result.agentMs,
      verifierMs: result.verifierMs,
      passRatio: result.passRatio,
      total: result.total,
      flags: result.flags,
      source: result.verifier?.source ?? null,
      patchFiles: result.patch?.files ?? null,
    }));
    process.stdout.write(`${JSON.stringify({ wallMs, checkVerifierMs, runs })}\n`);
  } finally {
    store.close();
  }
} finally {
  await sandbox.dispose?.();
}
