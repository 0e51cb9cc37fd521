import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { Command } from "commander";
import { InputError, UsageError } from "../../core/errors.js";
import { type DeltaSummary, INEFFECTIVE_DEFINITION, summarizeDeltas } from "../../stats/index.js";
import type { CommandContext } from "../context.js";
import { printJson, printLines } from "../context.js";

interface StatsTestOptions {
  readonly deltas?: string;
  readonly deltasFile?: string;
  readonly alpha: string;
  readonly seed: string;
  readonly json?: boolean;
}

const testHelp = `
Deltas are in points: 100 × (pass ratio with the skill − pass ratio without), one per
requirement. The verdict uses the exact two-sided sign-flip test (enumeration for up to 20
non-zero deltas, exact dynamic programming when the deltas lie on a grid such as pass-ratio
differences, enumeration again up to 40, and beyond that guaranteed bounds: the exact p lies in
[pLower, pUpper], printed as "p ≤ pUpper", refined while the bracket contains alpha, up to a
fixed amount of work; if alpha is still inside, the class is "undecided", never a guess). A
delta is zero, and two sums tie, only within floating-point rounding (64·n·2^-52·Σ|d|). The
paired t-test and the Wilcoxon signed-rank test (the same zeros dropped, mid-ranks for ties) are
reported for sensitivity, with a studentized bootstrap 95% confidence interval of the mean delta
(no interval when every delta is equal). Ineffective means no effect was detected at alpha with
these requirements, not that the skill has no effect.

JSON: {"n","delta","signflip":{"p","method","error",...},"ttest":{"t","df","p"},
"wilcoxon":{"statistic","p"},"class","ci","definitions",...}. signflip.method is exact, dp or
dp-bounds; signflip.error bounds |p − exact p| (0 for exact and dp; for dp-bounds p is an upper
bound, "pIsUpperBound" is true, and the exact p lies in ["pLower", "pUpper"]; "decided" says
whether that bracket lies on one side of alpha). "class" is golden, harmful, ineffective or
undecided. "ci" is a studentized bootstrap interval: "lower"/"upper" null when unbounded, and
"none" says why there is no interval. "t" is null when it is infinite (all deltas equal and
non-zero; its sign is the sign of "delta"), because JSON has no Infinity.

Examples:
  $ skillsmith stats test --deltas 10,-5,20,15,5,0,25
  $ skillsmith stats test --deltas=-10,-20,-5 --alpha 0.1 --json
  $ skillsmith stats test --deltas-file deltas.txt   (one number per line, or comma-separated)
`;

/** `skillsmith stats ...`: the statistics behind every verdict. */
export function registerStats(program: Command, context: CommandContext): void {
  const stats = program.command("stats").description("Statistical tests behind skill verdicts");
  stats
    .command("test")
    .description(
      "Test a vector of paired deltas and classify the skill (golden/harmful/ineffective)",
    )
    .option("--deltas <list>", "comma-separated deltas in points, e.g. 10,-5,20")
    .option("--deltas-file <path>", "file of deltas: one per line or comma-separated; # comments")
    .option("--alpha <number>", "significance level, strictly between 0 and 1", "0.05")
    .option("--seed <integer>", "seed of the bootstrap interval", "1")
    .option("--json", "print a JSON document instead of text")
    .addHelpText("after", testHelp)
    .action(async (options: StatsTestOptions) => {
      const deltas = await readDeltas(options, context.io.cwd);
      const alpha = parseAlpha(options.alpha);
      const seed = parseSeed(options.seed);
      const summary = summarizeDeltas(deltas, alpha, {
        signFlip: { seed },
        bootstrap: { seed },
      });
      if (options.json === true) printJson(context.io, toJson(summary));
      else printLines(context.io, toText(summary));
    });
}

async function readDeltas(options: StatsTestOptions, cwd: string): Promise<number[]> {
  if (options.deltas !== undefined && options.deltasFile !== undefined) {
    throw new UsageError(
      "cli.stats-conflicting-flags",
      "give either --deltas or --deltas-file, not both",
    );
  }
  if (options.deltas !== undefined) return parseDeltaFlag(options.deltas);
  if (options.deltasFile !== undefined) return parseDeltaFile(options.deltasFile, cwd);
  throw new UsageError(
    "cli.stats-missing-deltas",
    "missing deltas: pass --deltas 10,-5,20,... or --deltas-file <path>",
  );
}

const decimalNumber = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Parse one item; undefined when it is not a plain finite decimal number. */
function parseItem(item: string): number | undefined {
  if (!decimalNumber.test(item)) return undefined;
  const value = Number(item);
  return Number.isFinite(value) ? value : undefined;
}

function describeItem(item: string): string {
  return item === "" ? "empty" : JSON.stringify(item);
}

export function parseDeltaFlag(text: string): number[] {
  if (text.trim() === "") {
    throw new UsageError(
      "cli.stats-bad-deltas",
      "--deltas is empty; expected a comma-separated list of finite numbers such as 10,-5,20",
    );
  }
  const items = text.split(",").map((item) => item.trim());
  return items.map((item, index) => {
    const value = parseItem(item);
    if (value === undefined) {
      throw new UsageError(
        "cli.stats-bad-deltas",
        `--deltas: item ${index + 1} of ${items.length} is ${describeItem(item)}, not a number; expected a comma-separated list of finite numbers such as 10,-5,20`,
        { data: { position: index + 1, item } },
      );
    }
    return value;
  });
}

export async function parseDeltaFile(path: string, cwd: string): Promise<number[]> {
  const absolute = isAbsolute(path) ? path : resolve(cwd, path);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    throw new InputError(
      "cli.stats-deltas-file-unreadable",
      `cannot read the deltas file (${(error as NodeJS.ErrnoException).code ?? "error"}); expected a readable text file of numbers`,
      { file: path },
      { cause: error },
    );
  }
  const deltas: number[] = [];
  text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .forEach((rawLine, lineIndex) => {
      const line = rawLine.trim();
      if (line === "" || line.startsWith("#")) return;
      const items = line.split(",").map((item) => item.trim());
      items.forEach((item, itemIndex) => {
        const value = parseItem(item);
        if (value === undefined) {
          const position = items.length > 1 ? `item ${itemIndex + 1} ` : "";
          throw new InputError(
            "cli.stats-bad-deltas-file",
            `${position}${describeItem(item)} is not a number; expected one finite number per line or a comma-separated list`,
            { file: path, line: lineIndex + 1 },
            { data: { position: itemIndex + 1, item } },
          );
        }
        deltas.push(value);
      });
    });
  if (deltas.length === 0) {
    throw new InputError(
      "cli.stats-bad-deltas-file",
      "contains no deltas; expected one finite number per line or a comma-separated list",
      { file: path },
    );
  }
  return deltas;
}

function parseAlpha(text: string): number {
  const value = parseItem(text.trim());
  if (value === undefined || value <= 0 || value >= 1) {
    throw new UsageError(
      "cli.stats-bad-alpha",
      `--alpha is ${describeItem(text)}; expected a number strictly between 0 and 1, such as 0.05`,
    );
  }
  return value;
}

function parseSeed(text: string): number {
  const value = /^[+-]?\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new UsageError("stats.bad-seed", `--seed is ${describeItem(text)}; expected an integer`);
  }
  return value;
}

/** JSON has no ±Infinity or NaN: such values become null (documented in the help). */
function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function toJson(summary: DeltaSummary): unknown {
  return {
    n: summary.n,
    delta: summary.delta,
    signflip:
      summary.signflip.method === "dp-bounds"
        ? { ...summary.signflip, pIsUpperBound: true }
        : summary.signflip,
    ttest: { t: finiteOrNull(summary.ttest.t), df: summary.ttest.df, p: summary.ttest.p },
    wilcoxon: summary.wilcoxon,
    class: summary.class,
    alpha: summary.alpha,
    positive: summary.positive,
    negative: summary.negative,
    zero: summary.zero,
    sensitivity: summary.sensitivity,
    ci: summary.ci,
    definitions: { ineffective: INEFFECTIVE_DEFINITION },
  };
}

function formatNumber(value: number, digits = 4): string {
  if (!Number.isFinite(value)) return value > 0 ? "+∞" : value < 0 ? "−∞" : "undefined";
  return Number(value.toPrecision(digits)).toString();
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function signFlipLine(summary: DeltaSummary): string {
  const { signflip } = summary;
  const over = `over ${plural(signflip.nonZero, "non-zero delta")}`;
  if (signflip.method === "monte-carlo") {
    return `p ≈ ${formatNumber(signflip.p)} (Monte Carlo estimate, ${signflip.draws} draws, standard error ${formatNumber(signflip.standardError ?? 0, 2)})`;
  }
  if (signflip.method === "dp-bounds") {
    const side =
      signflip.decided === false
        ? `; α = ${summary.alpha} lies inside, so the verdict is undecided`
        : "";
    return `p ≤ ${formatNumber(signflip.p)} (an upper bound, not an estimate: exact p in [${formatNumber(signflip.pLower ?? 0)}, ${formatNumber(signflip.pUpper ?? 1)}] ${over}${side})`;
  }
  return `p = ${formatNumber(signflip.p)} (${signflip.method === "dp" ? "exact, dynamic programming" : "exact, enumeration"} ${over})`;
}

function intervalLine(summary: DeltaSummary): string {
  const { ci } = summary;
  const label = `${formatNumber(100 * ci.level)}% CI`;
  if (ci.none !== null) return `${label}  none: ${ci.none}`;
  const end = (value: number | null, infinite: string) =>
    value === null ? infinite : formatNumber(value);
  return `${label}  [${end(ci.lower, "−∞")}, ${end(ci.upper, "+∞")}] points (studentized bootstrap, ${ci.resamples} resamples, seed ${ci.seed}; coverage near ${formatNumber(100 * ci.level)}% checked by simulation)`;
}

function toText(summary: DeltaSummary): string[] {
  const { ttest, wilcoxon } = summary;
  const sign = summary.delta > 0 ? "+" : "";
  const verdict =
    summary.class === "undecided"
      ? `undecided at α = ${summary.alpha}: the exact p may lie on either side of α (no class)`
      : `${summary.class} at α = ${summary.alpha}`;
  return [
    `deltas     n = ${summary.n} (${summary.positive} positive, ${summary.negative} negative, ${plural(summary.zero, "zero")}), mean Δ = ${sign}${formatNumber(summary.delta)} points`,
    `sign-flip  ${signFlipLine(summary)}`,
    `t-test     t = ${formatNumber(ttest.t)}, df = ${ttest.df}, p = ${formatNumber(ttest.p)}`,
    `Wilcoxon   W+ = ${formatNumber(wilcoxon.statistic)}, p = ${formatNumber(wilcoxon.p)} (${wilcoxon.method}, ${plural(wilcoxon.zeros, "zero")} dropped, ${plural(wilcoxon.ties, "tie group")})`,
    intervalLine(summary),
    `class      ${verdict} (t-test: ${summary.sensitivity.ttest}, Wilcoxon: ${summary.sensitivity.wilcoxon})`,
    `           ${INEFFECTIVE_DEFINITION}`,
  ];
}
