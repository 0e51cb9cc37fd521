/**
 * The `skillsmith` command (bundled into `dist/cli/skillsmith.cjs`, see `wiki-query.ts`): a plain
 * `wiki search` on a fresh index is answered here; everything else, and that search whenever this
 * entry cannot answer it exactly, runs the full CLI (`main.ts`), loaded only then.
 */
import { answerFromIndex, writeStdout } from "./wiki-query.js";

const argv = process.argv.slice(2);
const answered =
  argv[0] === "wiki" && argv[1] === "search"
    ? answerFromIndex(argv, { cwd: process.cwd(), env: process.env, stdout: writeStdout })
    : undefined;
if (answered === undefined) void import("./main.js");
else process.exitCode = answered;
