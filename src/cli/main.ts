#!/usr/bin/env node
import { killChildrenOnExit } from "./interrupt.js";

killChildrenOnExit();
const argv = process.argv.slice(2);
// A plain `wiki search` runs without commander (fast-path.ts); everything else, and any failure
// of that path, goes through the full CLI, loaded only then.
const plain =
  argv[0] === "wiki" && argv[1] === "search"
    ? await (await import("./fast-path.js")).runPlainWikiSearch(argv)
    : undefined;
process.exitCode = plain ?? (await (await import("./program.js")).runCli(argv));
