#!/usr/bin/env node
import { killChildrenOnExit } from "./interrupt.js";
import { runCli } from "./program.js";

killChildrenOnExit();
const code = await runCli(process.argv.slice(2));
process.exitCode = code;
