// The build's third step: bundle the `skillsmith` command's entry (src/cli/launcher.ts with the
// start-up query of src/cli/wiki-query.ts) into one CommonJS file, dist/cli/skillsmith.cjs, and
// write the shell launcher dist/cli/skillsmith, the package's `bin`, which starts it. A plain
// `wiki search` on a fresh index is answered from the bundle alone, without the ES module loader
// and the ~25 modules of the full CLI; everything else imports dist/cli/main.js.
import { chmodSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const outfile = "dist/cli/skillsmith.cjs";
const launcher = "dist/cli/skillsmith";
/**
 * The shell launcher: Node reads NODE_EXTRA_CA_CERTS at every start, before any JavaScript (on a
 * machine that points it at the system bundle, ~50 ms CPU, as much as the query); a `wiki search`
 * opens no connection, so it starts without it and the bundle puts the user's value back
 * (src/cli/launcher.ts). `sh` and its exec cost about a millisecond. npm links the bin as a
 * symbolic link (possibly relative, possibly to another link): the bundle is found beside the
 * file the links end at.
 */
const shellLauncher = `#!/bin/sh
# skillsmith: see scripts/build-launcher.mjs and src/cli/launcher.ts.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
  /*) self=$link ;;
  *) self=\${self%/*}/$link ;;
  esac
done
case $self in
*/*) here=\${self%/*} ;;
*) here=. ;;
esac
if [ "$1" = wiki ] && [ "$2" = search ] && [ -n "\${NODE_EXTRA_CA_CERTS-}" ]; then
  SKILLSMITH_NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
  export SKILLSMITH_NODE_EXTRA_CA_CERTS
  unset NODE_EXTRA_CA_CERTS
else
  unset SKILLSMITH_NODE_EXTRA_CA_CERTS
fi
exec node "$here/skillsmith.cjs" "$@"
`;
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
writeFileSync(launcher, shellLauncher, { mode: 0o755 });
chmodSync(launcher, 0o755);
const inputs = Object.keys(Object.values(result.metafile.outputs)[0]?.inputs ?? {}).length;
process.stdout.write(`bundled ${outfile} (${inputs} modules), wrote ${launcher}\n`);
