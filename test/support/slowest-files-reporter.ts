/**
 * A vitest reporter added after the default one (see vitest.config.ts): at the end of a run it
 * prints the slowest test files, with their tier, and the run's wall time, so a file that grows
 * slow is seen in every `npm test` and not first as a CI timeout; and the tests that used more
 * than a third of their time limit, the next to fail on time alone on a busier machine.
 */
import { relative } from "node:path";
import type { Reporter, TestCase, TestModule, Vitest } from "vitest/node";

export interface FileTiming {
  readonly file: string;
  readonly tier: string;
  readonly durationMs: number;
}

/** The summary's lines: the `limit` slowest files, longest first, then the total wall time. */
export function slowestFilesSummary(
  timings: readonly FileTiming[],
  wallMs: number,
  limit = 10,
): string[] {
  const slowest = [...timings].sort((a, b) => b.durationMs - a.durationMs).slice(0, limit);
  const fileWidth = Math.max(0, ...slowest.map((timing) => timing.file.length));
  const tierWidth = Math.max(0, ...slowest.map((timing) => timing.tier.length));
  const filesMs = timings.reduce((sum, timing) => sum + timing.durationMs, 0);
  return [
    `Slowest ${slowest.length} of ${timings.length} test files:`,
    ...slowest.map((timing) =>
      `  ${seconds(timing.durationMs).padStart(8)}  ${timing.tier.padEnd(tierWidth)}  ${timing.file.padEnd(fileWidth)}`.trimEnd(),
    ),
    `Total: ${seconds(wallMs)} wall time (${seconds(filesMs)} in test files)`,
  ];
}

export interface TestTiming {
  readonly name: string;
  readonly durationMs: number;
  readonly limitMs: number;
}

/** The tests that used more than `fraction` of their time limit, closest to it first. */
export function nearLimitSummary(
  tests: readonly TestTiming[],
  fraction = 1 / 3,
  limit = 15,
): string[] {
  const share = (test: TestTiming) => test.durationMs / test.limitMs;
  const near = tests
    .filter((test) => test.limitMs > 0 && share(test) > fraction)
    .sort((a, b) => share(b) - share(a));
  if (near.length === 0) return [];
  return [
    `${near.length} test(s) used more than ${Math.round(fraction * 100)}% of their time limit:`,
    ...near
      .slice(0, limit)
      .map(
        (test) =>
          `  ${seconds(test.durationMs).padStart(8)} of ${seconds(test.limitMs).padStart(7)}  ${test.name}`,
      ),
    ...(near.length > limit ? [`  and ${near.length - limit} more`] : []),
  ];
}

function testTimings(module: TestModule, file: string): TestTiming[] {
  const timings: TestTiming[] = [];
  for (const test of module.children.allTests()) {
    const timing = testTiming(test, file);
    if (timing !== undefined) timings.push(timing);
  }
  return timings;
}

function testTiming(test: TestCase, file: string): TestTiming | undefined {
  const durationMs = test.diagnostic()?.duration;
  const limitMs = test.options.timeout;
  if (durationMs === undefined || limitMs === undefined) return undefined;
  return { name: `${file} > ${test.fullName}`, durationMs, limitMs };
}

/** Importing the file (often its heaviest part) counts as much as running its tests and hooks. */
function fileDuration(module: TestModule): number {
  const diagnostic = module.diagnostic();
  return (
    diagnostic.environmentSetupDuration +
    diagnostic.prepareDuration +
    diagnostic.collectDuration +
    diagnostic.setupDuration +
    diagnostic.duration
  );
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)} s`;
}

export default class SlowestFilesReporter implements Reporter {
  private vitest: Vitest | undefined;
  private started = performance.now();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    this.started = performance.now();
  }

  onTestRunStart(): void {
    this.started = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const root = this.vitest?.config.root ?? process.cwd();
    const timings = testModules.map((module) => ({
      file: relative(root, module.moduleId),
      tier: module.project.name,
      durationMs: fileDuration(module),
    }));
    const tests = testModules.flatMap((module) =>
      testTimings(module, relative(root, module.moduleId)),
    );
    const lines = [
      ...slowestFilesSummary(timings, performance.now() - this.started),
      ...nearLimitSummary(tests),
    ];
    const log = this.vitest?.logger;
    if (log === undefined) return;
    log.log("");
    for (const line of lines) log.log(line);
  }
}
