/**
 * Canary tests: per run, two test functions appended to one of the verifier's test modules, one
 * that must pass and one that must fail, named from the words of that module's own test names
 * (so they look like its tests) and written the same way, with random values. Which is which is
 * random, and only skillsmith and its plugin (over the channel) know their names. A must-fail
 * canary reported passed means outcomes were forged wholesale; a must-pass one not passing means
 * the code under test broke the test run itself. Either marks the run `tampered`.
 *
 * They catch blanket forgery (rewrite every report, swap every test body), not an attacker who
 * tells them apart — by knowing the verifier's published test names, or by reading the file and
 * spotting the two functions that never touch the deliverable. `../README.md` says so.
 */
import { randomInt } from "node:crypto";
import type { InventoryModule, PytestInventory } from "./inventory.js";

export interface Canary {
  /** Canonical id (`<module location>::<name>`, see `inventory.ts`). */
  readonly id: string;
  readonly name: string;
  readonly expect: "pass" | "fail";
}

export interface CanaryPlan {
  /** The module file (relative to the verifier's root) the canaries are appended to. */
  readonly file: string;
  /** The module's location (`verifier:tests/test_calc.py`). */
  readonly location: string;
  readonly canaries: readonly Canary[];
}

/** Words for names when a module's own test names give too few. */
const FILLER = [
  "basic",
  "boundary",
  "case",
  "combined",
  "default",
  "edge",
  "empty",
  "large",
  "mixed",
  "order",
  "repeat",
  "single",
  "small",
  "twice",
  "value",
];

export type RandomInteger = (maximumExclusive: number) => number;

const secureRandom: RandomInteger = (maximum) => randomInt(maximum);

/** Whether pytest's `python_functions` patterns collect `name` (prefix, or fnmatch glob). */
export function matchesFunctionPatterns(name: string, patterns: readonly string[]): boolean {
  return patterns.some(
    (pattern) =>
      name.startsWith(pattern) || (/[*?[]/.test(pattern) && globExpression(pattern).test(name)),
  );
}

/** fnmatch's syntax as a regular expression: `*`, `?`, `[seq]` and `[!seq]`. */
function globExpression(pattern: string): RegExp {
  let expression = "";
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern.charAt(index);
    const close = pattern.indexOf("]", index + 2);
    if (character === "*") expression += ".*";
    else if (character === "?") expression += ".";
    else if (character === "[" && close > index) {
      const set = pattern.slice(index + 1, close).replace(/\\/g, "\\\\");
      expression += set.startsWith("!") ? `[^${set.slice(1)}]` : `[${set}]`;
      index = close;
    } else expression += character.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${expression}$`);
}

function candidates(inventory: PytestInventory): InventoryModule[] {
  return inventory.modules.filter(
    (module) => module.file?.endsWith(".py") === true && module.functions.length > 0,
  );
}

/**
 * Choose a module and two canary names for one run; undefined when no module of the verifier has
 * module-level test functions to stand beside (documented: such verifiers run without canaries).
 * `source` is the chosen file's text, so no name already used in it is picked.
 */
export function planCanaries(
  inventory: PytestInventory,
  sourceOf: (file: string) => string,
  random: RandomInteger = secureRandom,
): CanaryPlan | undefined {
  const modules = candidates(inventory);
  if (modules.length === 0) return undefined;
  const module = modules[random(modules.length)] as InventoryModule;
  const file = module.file as string;
  const source = sourceOf(file);
  const sample = module.functions[random(module.functions.length)] as string;
  const prefix = /^[A-Za-z]+_?/.exec(sample)?.[0] ?? "test_";
  const words = [
    ...new Set(
      module.functions.flatMap((name) =>
        name
          .slice(prefix.length)
          .split("_")
          .filter((word) => /^[a-z]{3,}$/.test(word)),
      ),
    ),
  ];
  const pool = words.length >= 4 ? words : [...words, ...FILLER];
  const names: string[] = [];
  for (let attempt = 0; names.length < 2 && attempt < 200; attempt += 1) {
    const first = pool[random(pool.length)] as string;
    const second = FILLER.concat(pool)[random(FILLER.length + pool.length)] as string;
    if (first === second) continue;
    const name = `${prefix}${prefix.endsWith("_") || prefix === "" ? "" : "_"}${first}_${second}`;
    if (names.includes(name) || source.includes(name)) continue;
    if (!matchesFunctionPatterns(name, inventory.functionPatterns)) continue;
    names.push(name);
  }
  if (names.length < 2) return undefined;
  const failing = random(2);
  return {
    file,
    location: module.location,
    canaries: names.map((name, index) => ({
      id: `${module.location}::${name}`,
      name,
      expect: index === failing ? "fail" : "pass",
    })),
  };
}

/** The text appended to the module: the canaries as ordinary test functions. */
export function canarySource(
  plan: CanaryPlan,
  source: string,
  random: RandomInteger = secureRandom,
): string {
  const functions = plan.canaries.map((canary) => {
    const values = [2 + random(60), 2 + random(60), 2 + random(60)];
    const total = values.reduce((sum, value) => sum + value, 0);
    const expected = canary.expect === "pass" ? total : total + 1 + random(3);
    const words = canary.name.split("_").slice(1);
    const sentence = words.join(" ");
    const docstring = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
    return `def ${canary.name}():\n    """${docstring}"""\n    values = [${values.join(", ")}]\n    assert sum(values) == ${expected}\n`;
  });
  const separator = source.endsWith("\n") ? "\n\n" : "\n\n\n";
  return `${separator}${functions.join("\n\n")}`;
}
