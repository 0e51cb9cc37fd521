// The build's third step: bundle the `skillsmith` command's entry (src/cli/launcher.ts with the
// start-up query of src/cli/wiki-query.ts) into one CommonJS file, dist/cli/skillsmith.cjs, the
// package's `bin`. A plain `wiki search` on a fresh index is answered from this one file, without
// the ES module loader and the ~25 modules of the full CLI; everything else imports dist/cli/main.js.
import { chmodSync } from "node:fs";
import { build } from "esbuild";

const outfile = "dist/cli/skillsmith.cjs";
/**
 * A dynamic import inside the bundle (the embedding cache, the schema fallback of meta-check) is
 * code the start-up query never runs: it becomes a module that throws, so reaching it fails the
 * query, which then falls back to the full CLI, instead of loading a second copy of a module.
 * The launcher's own import of the full CLI stays an import of dist/cli/main.js.
 */
const lazyModulesStayOut = {
  name: "lazy-modules-stay-out",
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      if (args.importer.endsWith("launcher.ts")) return { path: args.path, external: true };
      return { path: `${args.importer} imports ${args.path}`, namespace: "outside-the-bundle" };
    });
    builder.onLoad({ filter: /.*/, namespace: "outside-the-bundle" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`not in the start-up bundle: ${args.path}`)});`,
      loader: "js",
    }));
  },
};

const result = await build({
  entryPoints: ["src/cli/launcher.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  outfile,
  banner: { js: "#!/usr/bin/env node" },
  plugins: [lazyModulesStayOut],
  metafile: true,
  // core/paths.ts (import.meta.url) is reachable only through the full CLI's wikiToRead, which
  // the bundle leaves out; the query falls back to the full CLI for the example wiki.
  logOverride: { "empty-import-meta": "silent" },
});
chmodSync(outfile, 0o755);
const inputs = Object.keys(Object.values(result.metafile.outputs)[0]?.inputs ?? {}).length;
process.stdout.write(`bundled ${outfile} (${inputs} modules)\n`);
