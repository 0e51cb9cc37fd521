/**
 * `wiki search` without commander, for the plain command lines a person or an agent types most:
 * a query and the stage-1 flags. On a small wiki the first query's cost is mostly start-up, and
 * commander (with the modules it requires, `child_process` among them) is a large part of it.
 *
 * Only the argument scan is separate: the search itself is `runWikiSearch`, the function the
 * registered command calls, and its output passes the same secret redaction as `runCli`'s. A
 * command line this scan does not fully understand (help, an unknown or repeated flag, a value
 * that looks like a flag, `--flag=value`, a second argument, a choice commander would refuse)
 * is left to the full CLI, and so is every error: the full CLI runs the command again and
 * reports it exactly as it always does (nothing was printed; building the index twice is
 * harmless). `fast-path.test.ts` compares both on the same command lines.
 */
import type { SearchFlags } from "./commands/wiki-search-run.js";
import { DEFAULT_MIN_SCORE, DEFAULT_POOL_FOLDER } from "./commands/wiki-shared.js";
import type { CliIo } from "./context.js";

/** Flags taking a value, by option name, and the `SearchFlags` key each sets. */
const valueFlags: Readonly<Record<string, keyof SearchFlags>> = {
  "--wiki": "wiki",
  "--domain": "domain",
  "--selection": "selection",
  "--shortlist-size": "shortlistSize",
  "--fields": "fields",
  "--visual-boost": "visualBoost",
};
const switches: Readonly<Record<string, keyof SearchFlags>> = {
  "--json": "json",
  "--include-unverified": "includeUnverified",
};

/**
 * The query and flags of `wiki search …` (argv after the program name) when the scan
 * understands the whole command line; undefined otherwise (the full CLI parses it).
 */
export function plainWikiSearch(
  argv: readonly string[],
): { readonly query: string; readonly flags: SearchFlags } | undefined {
  if (argv[0] !== "wiki" || argv[1] !== "search") return undefined;
  // commander's defaults for the flags this scan does not take (see wiki-search.ts).
  const flags: Record<string, unknown> = {
    seed: "0",
    searchTimeout: "15",
    pool: DEFAULT_POOL_FOLDER,
    budget: "20",
    minScore: String(DEFAULT_MIN_SCORE),
    fetchTimeout: "30",
  };
  const seen = new Set<string>();
  let query: string | undefined;
  for (let index = 2; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    if (!argument.startsWith("-")) {
      if (query !== undefined) return undefined;
      query = argument;
      continue;
    }
    if (seen.has(argument)) return undefined;
    seen.add(argument);
    const switchKey = switches[argument];
    if (switchKey !== undefined) {
      flags[switchKey] = true;
      continue;
    }
    const valueKey = valueFlags[argument];
    const value = argv[index + 1];
    if (valueKey === undefined || value === undefined || value.startsWith("-")) return undefined;
    flags[valueKey] = value;
    index += 1;
  }
  if (query === undefined) return undefined;
  if (
    flags.selection !== undefined &&
    flags.selection !== "paper" &&
    flags.selection !== "public-code"
  )
    return undefined;
  return { query, flags: flags as unknown as SearchFlags };
}

/**
 * Run a plain `wiki search` (see `plainWikiSearch`) and return its exit code; undefined when the
 * command line is not one, or when it failed before printing anything (then run the full CLI,
 * which reports the failure as usual).
 */
export async function runPlainWikiSearch(
  argv: readonly string[],
  ioOverrides: Partial<CliIo> = {},
): Promise<number | undefined> {
  const plain = plainWikiSearch(argv);
  if (plain === undefined) return undefined;
  const [{ redactKnownSecrets, registerEnvironmentSecrets }, { runWikiSearch }] = await Promise.all(
    [import("../model/redact.js"), import("./commands/wiki-search-run.js")],
  );
  const given: CliIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    stderrIsTerminal: process.stderr.isTTY === true,
    ...ioOverrides,
  };
  registerEnvironmentSecrets(given.env);
  let printed = false;
  const io: CliIo = {
    ...given,
    stdout: (text) => {
      printed = true;
      given.stdout(redactKnownSecrets(text, given.env));
    },
    stderr: (text) => {
      printed = true;
      given.stderr(redactKnownSecrets(text, given.env));
    },
  };
  let exitCode = 0;
  try {
    await runWikiSearch(
      {
        io,
        exit(code) {
          exitCode = Math.max(exitCode, code);
        },
      },
      plain.query,
      plain.flags,
    );
  } catch (error) {
    if (!printed) return undefined;
    // Something printed already cannot be taken back (the full CLI would print it twice).
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 3;
  }
  return exitCode;
}
