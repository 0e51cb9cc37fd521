/**
 * Rebuild the example wiki from `examples/resources/` with the scripted model server playing
 * the distiller (no model is reachable where this example is built; `distiller-script.json`
 * holds the distiller's answers). Run from the repository root:
 *
 *   node --import tsx examples/wiki/rebuild.ts
 *
 * Timestamps are fixed so a rebuild changes nothing unless the resources or the script do.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { runProcess } from "../../src/core/process.js";
import { ModelClient } from "../../src/model/client.js";
import { loadScript } from "../../src/model/scripted/script.js";
import { startScriptedServer } from "../../src/model/scripted/server.js";
import { buildWiki } from "../../src/wiki/build.js";

const here = import.meta.dirname;
const wiki = here;
const domain = "web-frontend";
for (const name of await readdir(join(wiki, domain)).catch(() => [] as string[]))
  if (name !== "capabilities.json")
    await rm(join(wiki, domain, name), { recursive: true, force: true });
await rm(join(wiki, "wiki.json"), { force: true });

const server = await startScriptedServer({
  script: await loadScript(join(here, "distiller-script.json")),
});
try {
  const model = new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "scripted", ANTHROPIC_BASE_URL: server.url },
    cwd: here,
  });
  const summary = await buildWiki({
    wiki,
    domain,
    resources: join(here, "..", "resources"),
    model,
    now: () => new Date("2026-11-29T00:00:00.000Z"),
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  const { reports: _reports, ...totals } = summary;
  process.stdout.write(`${JSON.stringify({ ...totals, wiki: "examples/wiki" }, null, 2)}\n`);
} finally {
  await server.close();
}
// The repository's formatter owns the layout of committed JSON; without this a rebuild would
// differ from the committed files in whitespace only.
await runProcess(join(here, "..", "..", "node_modules", ".bin", "biome"), [
  "format",
  "--write",
  here,
]);
