/**
 * Timing whole processes, as users meet the CLI: wall time from spawn to exit, interleaved with
 * a baseline process so both see the same load on a shared machine.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { summarise } from "./harness.js";

export const projectRoot = resolve(import.meta.dirname, "..");
export const cliBinary = join(projectRoot, "dist", "cli", "main.js");

export interface ProcessRun {
  readonly ms: number;
  /** User + system CPU time of the process (GNU time), when `/usr/bin/time` is installed. */
  readonly cpuMs?: number;
  /** Maximum resident set size in MiB (GNU time), when `/usr/bin/time` is installed. */
  readonly maxRssMiB?: number;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const GNU_TIME = "/usr/bin/time";
const gnuTime = existsSync(GNU_TIME);
let measurements = 0;

/**
 * Run `node ...argv` to completion and time it (wall clock, spawn to exit). Under GNU time, when
 * installed, also its CPU time and peak memory: on a shared machine the wall time grows with the
 * load while the CPU time stays near what one idle run takes.
 */
export function timeNode(
  argv: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<ProcessRun> {
  return timeProcess(process.execPath, argv, options);
}

/** `timeNode` for any executable (the wiki benchmark times a Python driver beside the CLI). */
export function timeProcess(
  executable: string,
  argv: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<ProcessRun> {
  measurements += 1;
  const usageFile = join(tmpdir(), `skillsmith-bench-usage-${process.pid}-${measurements}`);
  const [command, args] = gnuTime
    ? [GNU_TIME, ["-o", usageFile, "-f", "%U %S %M", executable, ...argv]]
    : [executable, [...argv]];
  return new Promise((done, fail) => {
    const started = performance.now();
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? projectRoot,
        env: options.env ?? process.env,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 10 * 60_000,
      },
      (error, stdout, stderr) => {
        const ms = performance.now() - started;
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : Number.NaN;
        let usage: { cpuMs?: number; maxRssMiB?: number } = {};
        if (gnuTime && existsSync(usageFile)) {
          // GNU time writes "Command exited with non-zero status N" before the format line.
          const line = readFileSync(usageFile, "utf8").trim().split("\n").at(-1) ?? "";
          rmSync(usageFile, { force: true });
          const [user, system, rssKib] = line.split(" ").map(Number);
          if (user !== undefined && system !== undefined && rssKib !== undefined) {
            usage = { cpuMs: (user + system) * 1000, maxRssMiB: rssKib / 1024 };
          }
        }
        if (Number.isNaN(code)) {
          fail(new Error(`${executable} ${argv.join(" ")} failed to run: ${error?.message}`));
          return;
        }
        done({ ms, code, stdout, stderr, ...usage });
      },
    );
  });
}

export interface StartupMeasurement {
  readonly medianMs: number;
  readonly bareMs: number;
  /** Median CPU time (user + system) of the command and of bare Node, under GNU time. */
  readonly cpuMs?: number;
  readonly bareCpuMs?: number;
  readonly last: ProcessRun;
}

/**
 * Median wall times of `command` and of bare `node -e 0`, sampled alternately (`samples` each,
 * after one untimed run of both). Every run of the command must exit with `expectedCode`.
 */
export async function againstBareNode(
  command: readonly string[],
  options: {
    readonly samples?: number;
    readonly cwd?: string;
    readonly expectedCode?: number;
  } = {},
): Promise<StartupMeasurement> {
  const samples = options.samples ?? 9;
  const expected = options.expectedCode ?? 0;
  const run = async () => {
    const result = await timeNode(command, options.cwd === undefined ? {} : { cwd: options.cwd });
    if (result.code !== expected) {
      throw new Error(
        `node ${command.join(" ")} exited ${result.code}, expected ${expected}: ${result.stderr.slice(0, 500)}`,
      );
    }
    return result;
  };
  let last = await run();
  await timeNode(["-e", "0"]);
  const times: number[] = [];
  const bare: number[] = [];
  const cpu: number[] = [];
  const bareCpu: number[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    // The order alternates: whichever runs second in a pair was measured to gain a little.
    const first = sample % 2 === 0 ? undefined : await run();
    const baseline = await timeNode(["-e", "0"]);
    last = first ?? (await run());
    bare.push(baseline.ms);
    if (baseline.cpuMs !== undefined) bareCpu.push(baseline.cpuMs);
    times.push(last.ms);
    if (last.cpuMs !== undefined) cpu.push(last.cpuMs);
  }
  return {
    medianMs: summarise(times).medianMs,
    bareMs: summarise(bare).medianMs,
    ...(cpu.length === samples && bareCpu.length === samples
      ? { cpuMs: summarise(cpu).medianMs, bareCpuMs: summarise(bareCpu).medianMs }
      : {}),
    last,
  };
}

function newestMtime(folder: string, keep: (name: string) => boolean): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !keep(entry.name)) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The built CLI, refused when it is missing or older than the sources (a stale `dist/` would
 * time code that no longer exists).
 */
export function builtCli(): string {
  const build = "build it first: npx tsc -p tsconfig.build.json";
  if (!existsSync(cliBinary)) throw new Error(`${cliBinary} is missing; ${build}`);
  const sources = newestMtime(
    join(projectRoot, "src"),
    (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"),
  );
  const built = newestMtime(join(projectRoot, "dist"), (name) => name.endsWith(".js"));
  if (built < sources) throw new Error(`dist/ is older than src/; ${build}`);
  return cliBinary;
}

/**
 * The `skillsmith` command as installed (`bin` in package.json: `dist/cli/skillsmith.cjs`, the
 * start-up bundle of `npm run build`), refused like `builtCli` when missing or stale.
 */
export function builtBin(): string {
  builtCli();
  const build = "build it first: npm run build";
  const sources = newestMtime(
    join(projectRoot, "src"),
    (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"),
  );
  // The shell launcher (package.json `bin`, what npm links) and the bundle it starts.
  const launcher = join(projectRoot, "dist", "cli", "skillsmith");
  for (const file of [launcher, `${launcher}.cjs`]) {
    if (!existsSync(file)) throw new Error(`${file} is missing; ${build}`);
    if (statSync(file).mtimeMs < sources) throw new Error(`${file} is older than src/; ${build}`);
  }
  return launcher;
}

/** "3.10× bare node (45 ms); CPU 120 ms, bare 40 ms" for a row's note. */
export function timesBare(
  medianMs: number,
  bareMs: number,
  cpu?: { readonly cpuMs?: number; readonly bareCpuMs?: number },
): string {
  const wall = `${(medianMs / bareMs).toFixed(2)}× bare node (${bareMs.toFixed(0)} ms)`;
  if (cpu?.cpuMs === undefined || cpu.bareCpuMs === undefined) return wall;
  return `${wall}; CPU ${cpu.cpuMs.toFixed(0)} ms = ${(cpu.cpuMs / cpu.bareCpuMs).toFixed(2)}× bare (${cpu.bareCpuMs.toFixed(0)} ms)`;
}
