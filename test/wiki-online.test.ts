/**
 * Online acquisition: a task the offline wiki cannot serve triggers a targeted query to a
 * connector, the scripted distiller and the same gates, and the accepted skills land in a
 * separate pool (budget enforced, recorded), never in the offline wiki.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { UnavailableRunner } from "../src/wiki/gates.js";
import { skillId } from "../src/wiki/meta.js";
import {
  acquireOnline,
  LocalFolderConnector,
  needsAcquisition,
  poolRecordSchema,
} from "../src/wiki/online.js";
import { searchSkills, WikiSearch } from "../src/wiki/search.js";
import { listEntries } from "../src/wiki/store.js";
import { answer, skill, writeHandWiki } from "./support/wiki.js";

let root: string;
let server: ScriptedServer;
let model: ModelClient;
const QR_HTML = `<html><head><title>QR codes</title></head><body><article>
<p>A QR code stores a short text, such as a URL, as a square grid of dark and light modules.</p>
<p>Generate one from the command line with a QR encoder and embed the PNG in the page with alt text.</p>
</article></body></html>`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-online-"));
  await writeHandWiki(join(root, "offline"));
  const online = join(root, "online-resources");
  await mkdir(online);
  await writeFile(join(online, "qr-codes.html"), QR_HTML);
  await writeFile(
    join(online, "unrelated.html"),
    "<html><body><p>Gardening tips for tomatoes in a small balcony.</p></body></html>",
  );
  server = await startScriptedServer({
    script: {
      rules: [
        {
          match: { lastUserMessage: "Resource path: connector-0/qr-codes.html" },
          reply: answer([
            skill({
              skill_name: "Embed a QR code",
              category_path: ["components", "media"],
              tags: ["qr", "code", "png"],
              applicability: "When a page must offer a scannable link.",
              provenance: { source_path: "connector-0/qr-codes.html", node_index: 1 },
            }),
            skill({
              skill_name: "Explain QR modules",
              category_path: ["components", "media"],
              tags: ["qr"],
              applicability: "When describing how a QR code stores text.",
              provenance: { source_path: "connector-0/qr-codes.html", node_index: 0 },
            }),
          ]),
        },
      ],
      fallback: answer([]),
    },
  });
  model = new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: server.url },
    cwd: root,
  });
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe("online acquisition", () => {
  it("acquires into a separate, recorded pool within the budget when the offline wiki has nothing", async () => {
    const offline = join(root, "offline");
    const before = await listEntries(offline);
    const result = await searchSkills(await WikiSearch.open(offline), "embed qr code");
    expect(needsAcquisition(result, 1)).toBe(true);

    const pool = join(root, "run-1", "online-pool");
    const acquired = await acquireOnline({
      query: "embed qr code",
      pool,
      offlineWiki: offline,
      domain: "web-frontend",
      connectors: [new LocalFolderConnector(join(root, "online-resources"))],
      model,
      budget: 1,
      runner: new UnavailableRunner("not needed"),
    });
    // The connector's BM25 finds only the QR article (the other shares no query term).
    expect(acquired.resources).toBe(1);
    expect(acquired.summary?.accepted).toBe(1);
    expect(acquired.summary?.over_budget).toBe(1);
    expect(acquired.poolSize).toBe(1);
    const poolEntries = await listEntries(pool, "web-frontend");
    expect(poolEntries.map((entry) => entry.meta.skill_id)).toEqual([
      skillId("web-frontend", "connector-0/qr-codes.html", 1),
    ]);

    const record = poolRecordSchema.parse(
      JSON.parse(await readFile(join(pool, "pool.json"), "utf8")),
    );
    expect(record.budget).toBe(1);
    expect(record.acquisitions[0]?.resources).toEqual([
      {
        connector: `folder:${join(root, "online-resources")}`,
        path: "connector-0/qr-codes.html",
        source: join(root, "online-resources", "qr-codes.html"),
        type: "article",
      },
    ]);
    expect(record.acquisitions[0]?.outcomes).toEqual({ accepted: 1, "over-budget": 1 });

    // The offline wiki is untouched.
    expect((await listEntries(offline)).map((entry) => entry.meta.skill_id)).toEqual(
      before.map((entry) => entry.meta.skill_id),
    );
    expect(
      existsSync(
        join(offline, "web-frontend", skillId("web-frontend", "connector-0/qr-codes.html", 1)),
      ),
    ).toBe(false);
  });

  it("refuses a pool inside the offline wiki and a budget over 100", async () => {
    const offline = join(root, "offline");
    const base = {
      query: "q",
      offlineWiki: offline,
      domain: "web-frontend",
      connectors: [],
      model,
    };
    await expect(
      acquireOnline({ ...base, pool: join(offline, "pool"), budget: 5 }),
    ).rejects.toThrow("outside the offline wiki");
    await expect(acquireOnline({ ...base, pool: join(root, "p"), budget: 101 })).rejects.toThrow(
      "from 1 to 100",
    );
  });
});
