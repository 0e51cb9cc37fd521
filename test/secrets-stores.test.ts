/**
 * Secrets never reach what skillsmith stores, whichever store: for each one a real-looking key
 * is planted where skillsmith learns of it (this process's environment, a model endpoint's key,
 * a command's environment) or in a shape it knows (a GitHub token), then made to flow into the
 * store's content through the store's own code path (a model answer that echoes it, a
 * synthesised skill and an editor's slot that quote it, a wiki resource that contains it, a
 * stored run read back into a report). The test then reads every raw byte the store left on
 * disk (SQLite's WAL included) and finds none of the keys — and finds the redaction marker, so
 * the key did get there and was removed, rather than never arriving.
 *
 * Before: the model call cache removed only its own endpoint's key; the synthesis pool, run log,
 * libraries, patches and optimisation reports, every wiki file (entries, manifests, download
 * cache, online pool record) and the HTML report were written as they came.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelCallCache } from "../src/model/cache.js";
import { ModelClient } from "../src/model/client.js";
import { redactionMarker } from "../src/model/redact.js";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  buildPool,
  defaultSplitSeed,
  LibraryStore,
  optimiseLibrary,
  readPool,
  runMethod,
} from "../src/synth/index.js";
import { buildWiki } from "../src/wiki/build.js";
import { UnavailableRunner } from "../src/wiki/gates.js";
import { acquireOnline, LocalFolderConnector } from "../src/wiki/online.js";
import { listEntries } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";
import { runResult, writeStore } from "./support/results.js";
import {
  criticBlamingTheSkill,
  hasPytest,
  shipped,
  startBuiltinFamily,
  writeShippedFamily,
} from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";
import {
  ARTICLE_HTML,
  answer,
  type ResourceServer,
  skill,
  startResourceServer,
  writeHandWiki,
} from "./support/wiki.js";

const unique = randomBytes(6).toString("hex");
/** In this process's environment under a key-like name; in no token shape skillsmith knows. */
const ENVIRONMENT_KEY = `svc-${unique}-9f8e7d6c5b4a`;
const ENVIRONMENT_VARIABLE = "SKILLSMITH_TEST_DEPLOY_TOKEN";
/** Only a model endpoint's key (the client's own environment, not this process's). */
const ENDPOINT_KEY = `endpoint-${unique}-3c2b1a0f`;
/** A GitHub token, written by hand in GitHub's documented shape; known to nobody. */
const GITHUB_TOKEN = `ghp_${"Z9y8X7w6V5u4T3s2R1q0".repeat(2).slice(0, 36)}`;
const KEYS = [ENVIRONMENT_KEY, ENDPOINT_KEY, GITHUB_TOKEN];
/** Text quoting every key, as a careless model answer or a resource would. */
const QUOTING = `deploy with ${ENVIRONMENT_KEY}, call the API with ${ENDPOINT_KEY} and clone with ${GITHUB_TOKEN}`;

const cleanups = cleanupsAfterEach();
let root: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  process.env[ENVIRONMENT_VARIABLE] = ENVIRONMENT_KEY;
  root = await mkdtemp(join(tmpdir(), "secrets-stores-"));
});

afterAll(async () => {
  delete process.env[ENVIRONMENT_VARIABLE];
  for (const server of servers) await server.close();
  await rm(root, { recursive: true, force: true });
});

/** Every file below `folder`, as raw bytes, by path relative to it. */
function rawFiles(folder: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files.set(path.slice(folder.length + 1), readFileSync(path));
    }
  return files;
}

/** No key in any byte below `folder`; the marker in at least one file (the key got there). */
function expectRedacted(folder: string, keys: readonly string[] = KEYS): Map<string, Buffer> {
  const files = rawFiles(folder);
  expect(files.size).toBeGreaterThan(0);
  for (const [path, bytes] of files)
    for (const key of keys) expect(bytes.includes(key), `${key} in ${path}`).toBe(false);
  expect([...files.values()].some((bytes) => bytes.includes(redactionMarker))).toBe(true);
  return files;
}

async function scriptedClient(script: Script, cwd: string): Promise<ModelClient> {
  const server = await startScriptedServer({ script });
  servers.push(server);
  return new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: ENDPOINT_KEY, ANTHROPIC_BASE_URL: server.url },
    cwd,
    retry: { maxRetries: 0 },
  });
}

describe("the model call cache", () => {
  it("stores an answer that echoes keys (text and a tool call's input) without them", async () => {
    const folder = join(root, "model-cache");
    await mkdir(folder);
    const cache = ModelCallCache.open(join(folder, "calls.sqlite"));
    const server = await startScriptedServer({
      script: {
        rules: [],
        fallback: {
          text: QUOTING,
          toolCalls: [{ name: "remember", input: { note: QUOTING } }],
        },
      },
    });
    servers.push(server);
    const client = new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      env: { ANTHROPIC_API_KEY: ENDPOINT_KEY, ANTHROPIC_BASE_URL: server.url },
      cwd: folder,
      cache,
      retry: { maxRetries: 0 },
    });
    const first = await client.generateText({ role: "test", prompt: "say the keys" });
    // The caller still gets the answer as the model gave it; only the stored copy is redacted.
    expect(first.text).toContain(ENVIRONMENT_KEY);
    const again = await client.generateText({ role: "test", prompt: "say the keys" });
    expect(again.fromCache).toBe(true);
    expect(again.text).toBe(
      `deploy with ${redactionMarker}, call the API with ${redactionMarker} and clone with ${redactionMarker}`,
    );
    cache.close();
    expectRedacted(folder);
  });
});

describe.skipIf(!hasPytest)("the synthesis stores (needs python3 with pytest)", () => {
  it("keep no key from synthesised skills, solver answers, critic and editor in pool, run log, libraries, patches and reports", async () => {
    const ids = ["digit-sum", "roman-to-int"];
    const { tasks, references } = await shipped();
    const skillSystem = "You write a temporary agent skill";
    const skillText = (hint: string) =>
      `---\nname: keyed-skill\ndescription: Guidance quoting ${ENVIRONMENT_KEY}.\n---\n\n## When to use\nFor this task only (${GITHUB_TOKEN}).\n\n## Approach\n1. ${hint}\n\n## Pitfalls\n- ${ENDPOINT_KEY}\n\n## Checks\n- Try a small example.\n`;
    const rules: ScriptRule[] = [
      {
        match: { system: `${skillSystem}[\\s\\S]*EMIT-MAGIC` },
        reply: { text: skillText("MAGIC") },
      },
      { match: { system: skillSystem }, reply: { text: skillText("Think.") } },
      criticBlamingTheSkill(ids, `the skill leaked ${ENVIRONMENT_KEY}`),
      {
        match: { system: "You are the editor" },
        reply: {
          text: JSON.stringify({
            rationale: `name the strategy; the old slot quoted ${ENDPOINT_KEY}`,
            operations: [
              {
                op: "add",
                category: "input",
                id: "emit-magic",
                text: `EMIT-MAGIC: name the strategy, never ${GITHUB_TOKEN}.`,
              },
            ],
          }),
        },
      },
    ];
    for (const id of ids) {
      const task = tasks.find((each) => each.id === id);
      if (task === undefined) throw new Error(`no shipped task ${id}`);
      const target = `signature:\\n${task.signature.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&")}`;
      // With the magic word the solver answers correctly, so the editor's patch is accepted
      // and a new library version (quoting the token) is written.
      rules.push({
        match: { lastUserMessage: `MAGIC[\\s\\S]*${target}` },
        reply: { text: `# ${QUOTING}\n\`\`\`python\n${references[id]}\`\`\`` },
      });
      rules.push({
        match: { lastUserMessage: target },
        reply: {
          text: `\`\`\`python\n${task.signature}:\n    raise NotImplementedError("${ENVIRONMENT_KEY}")\n\`\`\``,
        },
      });
    }
    const directory = await temporaryDirectoryIn(cleanups, "secrets-synth-");
    const familyDirectory = await writeShippedFamily(
      await temporaryDirectoryIn(cleanups, "secrets-synth-family-"),
      ids,
    );
    const started = await startBuiltinFamily(
      cleanups,
      { rules, fallback: { text: "unexpected request" } },
      familyDirectory,
      directory,
    );
    // The endpoint key of this test's client, as `scriptedClient` would set it up.
    const model = new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      env: { ANTHROPIC_API_KEY: ENDPOINT_KEY, ANTHROPIC_BASE_URL: started.server.url },
      cwd: directory,
      retry: { maxRetries: 0 },
    });
    const { family } = started;
    const train = family.split(started.tasks, "train", defaultSplitSeed);
    const poolPath = join(directory, "pool.jsonl");
    await buildPool({ family, model, tasks: started.tasks, split: "train", path: poolPath });
    const pool = await readPool(poolPath);
    const store = new LibraryStore(join(directory, "store"));
    await runMethod({
      family,
      model,
      tasks: started.tasks,
      pool,
      method: "synth",
      library: await store.load("v1"),
      logPath: join(directory, "runs", "synth.jsonl"),
    });
    const report = await optimiseLibrary({
      family,
      model,
      trainTasks: train.length > 0 ? train : started.tasks,
      pool,
      store,
      epochs: 1,
      sampleShare: 1,
      seed: 3,
    });
    await store.saveOptimisation({ ...report, note: QUOTING });
    // The attack reached every store: the editor's patch was kept as v2.
    expect(await store.versions()).toContain("v2");
    const files = expectRedacted(directory);
    for (const stored of [
      "pool.jsonl",
      join("runs", "synth.jsonl"),
      join("store", "libraries", "v2.json"),
      join("store", "patches", "0001.json"),
      join("store", "patches", "0001.diff"),
    ])
      expect(files.get(stored)?.includes(redactionMarker), stored).toBe(true);
    // What was stored still reads back: the pool and the new library parse.
    expect(await readPool(poolPath)).toHaveLength(pool.length);
    expect((await store.load("v2")).input.map((slot) => slot.text).join("\n")).toContain(
      `never ${redactionMarker}`,
    );
  }, 120_000);
});

describe("the wiki stores", () => {
  let web: ResourceServer | undefined;
  afterAll(async () => {
    await web?.close();
  });

  it("keep no key from a local resource, a downloaded one and the distiller in entries, manifests, download cache and the online pool", async () => {
    const resources = join(root, "wiki-resources");
    await mkdir(resources, { recursive: true });
    const keyedArticle = ARTICLE_HTML.replace(
      "<p>This works",
      `<p>Deploy token: ${ENVIRONMENT_KEY}; CI token ${GITHUB_TOKEN}.</p>\n<p>This works`,
    );
    await writeFile(join(resources, "grid-centering.html"), keyedArticle);
    web = await startResourceServer({
      routes: { "/keyed.html": { contentType: "text/html", body: keyedArticle } },
    });
    const url = `${web.url}/keyed.html`;
    const keyedSkill = (sourcePath: string) =>
      skill({
        skill_name: "Center with CSS grid",
        category_path: ["layout", "grid"],
        applicability: `When a child must be centered (token ${GITHUB_TOKEN}).`,
        tags: ["css", "grid"],
        text_body: `Make the parent a grid container and set place-items to center. ${QUOTING}. The child is then centered whatever its size.`,
        provenance: { source_path: sourcePath, node_index: 1 },
        code_body: `#!/bin/sh\n# ${QUOTING}\nprintf 'centered\\n'\n`,
        code_language: "sh",
      });
    const model = await scriptedClient(
      {
        rules: [
          {
            match: { lastUserMessage: "Resource path: grid-centering\\.html" },
            reply: answer([keyedSkill("grid-centering.html")]),
          },
          {
            match: { lastUserMessage: "Resource path: http" },
            reply: answer([keyedSkill(url)]),
          },
          {
            match: { lastUserMessage: "Resource path: connector-0/" },
            reply: answer([keyedSkill("connector-0/grid-centering.html")]),
          },
        ],
        fallback: answer([]),
      },
      root,
    );
    const wiki = join(root, "wiki");
    const summary = await buildWiki({
      wiki,
      domain: "web-frontend",
      resources: [resources, url],
      model,
      runner: new UnavailableRunner("not needed here"),
    });
    expect(summary.candidates).toBe(2);
    expect(summary.unverified).toBe(2);
    const files = expectRedacted(wiki);
    // The download cache, the manifest and an entry's every part each had a key removed.
    const marked = [...files]
      .filter(([, bytes]) => bytes.includes(redactionMarker))
      .map(([path]) => path.replace(/[0-9a-f]{64}|[0-9a-f]{40}/g, "<id>"));
    expect(marked).toEqual(
      expect.arrayContaining([
        ".cache/downloads/<id>/keyed.html",
        "web-frontend/<id>/meta.json",
        "web-frontend/<id>/text/overview.md",
        "web-frontend/<id>/code/main.sh",
      ]),
    );
    expect((await listEntries(wiki)).length).toBe(2);

    // Online acquisition: the task text itself quotes a key; pool.json records the query.
    const offline = join(root, "offline-wiki");
    await writeHandWiki(offline);
    const pool = join(root, "online-pool");
    const acquired = await acquireOnline({
      query: `center a grid child, token ${GITHUB_TOKEN} and ${ENVIRONMENT_KEY}`,
      pool,
      offlineWiki: offline,
      domain: "web-frontend",
      connectors: [new LocalFolderConnector(resources)],
      model,
      budget: 5,
      runner: new UnavailableRunner("not needed here"),
    });
    expect(acquired.resources).toBe(1);
    const poolFiles = expectRedacted(pool);
    expect(poolFiles.get("pool.json")?.includes(redactionMarker)).toBe(true);
  });
});

describe("bench report --html", () => {
  it("writes no key into the HTML file even when the stored run still holds one", async () => {
    const reportKey = `report-${unique}-7a6b5c4d`;
    const runDir = join(root, "report-run");
    // A store written before this key was known (an older run, another machine's key): the
    // report is built from what it holds, so only the file's own write boundary can help.
    writeStore(runDir, [
      runResult("c", "alpha", "r1", "without", 0, {
        checks: [{ name: "t::key", status: "fail", message: `saw ${reportKey}` }],
        trajectory: { events: [{ type: "assistant_text", text: `the key is ${reportKey}` }] },
      }),
      runResult("c", "alpha", "r1", "with", 1),
    ]);
    expect(readFileSync(join(runDir, "results.sqlite")).includes(reportKey)).toBe(true);
    const out = join(root, "report-html");
    await mkdir(out);
    const result = await runInProcess(
      ["bench", "report", runDir, "--html", join(out, "report.html")],
      { env: { ...process.env, SKILLSMITH_TEST_REPORT_TOKEN: reportKey } },
    );
    expect(result.code, result.stderr).toBe(0);
    expectRedacted(out, [reportKey]);
  });
});
