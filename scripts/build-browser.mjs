// The build's second step: bundle the report's browser modules into dist/report/browser/ (after
// `tsc` has compiled dist/). See src/report/browser-code.ts.
import { writeBrowserBundles } from "../dist/report/browser-code.js";

for (const path of writeBrowserBundles()) process.stdout.write(`bundled ${path}\n`);
