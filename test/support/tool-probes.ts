/**
 * Whether the tools that many end-to-end files need are here, found out once per vitest run by
 * the global setup (tool-probes-setup.ts, `vitest.config.ts`) rather than once per file:
 * `python3` on this machine's PATH is a pyenv shim, so each probe cost about 0.9 s of CPU and
 * 2.5 s of wall time at load 7, in each of the 40-odd files that asked.
 */
import { inject } from "vitest";
import { probePytest } from "./tool-probes-setup.js";

/**
 * Whether `python3 -m pytest` runs here: the run's probe, or a probe of this file's own when
 * the global setup did not run (a file started outside vitest.config.ts).
 */
export const hasPytest: boolean = inject("hasPytest") ?? probePytest();
