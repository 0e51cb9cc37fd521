/**
 * The `skillsmith` command's JavaScript entry (bundled into `dist/cli/skillsmith.cjs`, see
 * `wiki-query.ts`), started by the shell launcher `dist/cli/skillsmith` (package.json `bin`,
 * written by `scripts/build-launcher.mjs`): a plain `wiki search` on a fresh index is answered
 * here; everything else, and that search whenever this entry cannot answer it exactly, runs the
 * full CLI (`main.ts`), loaded only then.
 *
 * Node reads `NODE_EXTRA_CA_CERTS` at start, before any JavaScript, and on a machine whose value
 * names a system bundle that costs as much CPU as the whole query. A search never opens a network
 * connection, so the shell launcher starts `wiki search …` without it and passes the user's value
 * in `SKILLSMITH_NODE_EXTRA_CA_CERTS`. This entry puts it back into the environment before
 * anything else runs, so every child process sees the user's original environment, and a command
 * line that could reach a model or an embedding API (anything the plain scan does not take, such
 * as `--strategy` or `--model`) is run again in a new Node process, which reads the certificates
 * at start as it always would (`handOver`; `test/cli-launcher.test.ts`).
 */
import { spawnSync } from "node:child_process";
import { plainWikiSearch } from "./fast-path.js";
import { answerFromIndex, writeStdout } from "./wiki-query.js";

/** The variable the shell launcher moves `NODE_EXTRA_CA_CERTS` into (keep both in step). */
const SET_ASIDE_CERTIFICATES = "SKILLSMITH_NODE_EXTRA_CA_CERTS";

const argv = process.argv.slice(2);
const setAside = process.env[SET_ASIDE_CERTIFICATES];
if (setAside !== undefined) {
  delete process.env[SET_ASIDE_CERTIFICATES];
  process.env.NODE_EXTRA_CA_CERTS = setAside;
}
const answered =
  argv[0] === "wiki" && argv[1] === "search"
    ? answerFromIndex(argv, { cwd: process.cwd(), env: process.env, stdout: writeStdout })
    : undefined;
if (answered !== undefined) process.exitCode = answered;
// A plain scan runs strategy bm25-only with no model and no embedding client: the full CLI
// answers it from the wiki's files alone, in this process, without the certificates.
else if (setAside === undefined || plainWikiSearch(argv) !== undefined) void import("./main.js");
else handOver();

/** Run this command line again in a Node process started with the user's environment. */
function handOver(): void {
  const run = spawnSync(
    process.execPath,
    [...process.execArgv, process.argv[1] as string, ...argv],
    {
      stdio: "inherit",
      env: process.env,
    },
  );
  if (run.error !== undefined) throw run.error;
  if (run.signal !== null) process.kill(process.pid, run.signal);
  else process.exitCode = run.status ?? 1;
}
