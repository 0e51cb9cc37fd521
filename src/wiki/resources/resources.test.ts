import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { readArticle } from "./article.js";
import { prepareResource } from "./collect.js";
import { recogniseLicence } from "./licence.js";
import { clock, parseSubtitles } from "./video.js";

describe("licence recognition", () => {
  it("recognises permissive, copyleft and restrictive licences and flags the unknown", () => {
    expect(recogniseLicence("MIT License\n\nPermission is hereby granted, free of charge")).toEqual(
      { licence: "MIT", flag: "permissive" },
    );
    expect(recogniseLicence("Apache License\nVersion 2.0, January 2004")).toEqual({
      licence: "Apache-2.0",
      flag: "permissive",
    });
    expect(recogniseLicence("GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007")).toEqual({
      licence: "GPL-3.0",
      flag: "copyleft",
    });
    expect(recogniseLicence("CC-BY-NC-4.0")).toEqual({
      licence: "CC-BY-NC-4.0",
      flag: "restrictive",
    });
    expect(recogniseLicence("Copyright 2024 ACME. All rights reserved.")).toEqual({
      licence: "proprietary",
      flag: "restrictive",
    });
    expect(recogniseLicence("Do what you like, I guess")).toEqual({
      licence: null,
      flag: "unknown",
    });
    expect(recogniseLicence(undefined)).toEqual({ licence: null, flag: "unknown" });
  });
});

describe("subtitles", () => {
  it("parses SubRip and WebVTT cues with their times", () => {
    const srt =
      "1\n00:00:01,250 --> 00:00:02,000\nHello <i>there</i>\nfriend\n\n2\n00:01:00,000 --> 00:01:02,500\nBye\n";
    expect(parseSubtitles(srt)).toEqual([
      { startSeconds: 1.25, endSeconds: 2, text: "Hello there friend" },
      { startSeconds: 60, endSeconds: 62.5, text: "Bye" },
    ]);
    const vtt =
      "WEBVTT\n\n00:05.5 --> 00:07.000 align:start\nShort form\n\nbroken block without timing\n";
    expect(parseSubtitles(vtt)).toEqual([{ startSeconds: 5.5, endSeconds: 7, text: "Short form" }]);
    expect(clock(3725.9)).toBe("01:02:05");
  });
});

describe("article paragraphs", () => {
  it("keeps the readable content's paragraphs and code, drops navigation and short fragments", () => {
    const html = `<html><head><title>T</title><link rel="license" href="https://creativecommons.org/licenses/by-sa/4.0/"></head><body>
      <nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
      <article><h2>Why spacing matters here</h2>
      <p>First paragraph,   with   extra spaces, long enough to count as one.</p>
      <p>Ok.</p>
      <ul><li>A list item that is long enough to keep as a paragraph.</li></ul>
      <pre>a {\n  color: red;\n}</pre>
      <p>Last paragraph of the article, also long enough to count here.</p></article></body></html>`;
    const article = readArticle(html);
    expect(article.declaredLicence).toBe("https://creativecommons.org/licenses/by-sa/4.0/");
    expect(article.paragraphs).toContain(
      "First paragraph, with extra spaces, long enough to count as one.",
    );
    expect(article.paragraphs).toContain("A list item that is long enough to keep as a paragraph.");
    expect(article.paragraphs).toContain("```\na {\n  color: red;\n}\n```");
    expect(article.paragraphs).not.toContain("Ok.");
    expect(article.paragraphs.some((paragraph) => paragraph.includes("Home"))).toBe(false);
    expect(article.paragraphs.at(-1)).toBe(
      "Last paragraph of the article, also long enough to count here.",
    );
  });
});

describe("licence sidecars", () => {
  const cleanups = cleanupsAfterEach();
  const html =
    "<html><head><title>T</title></head><body><article><p>A paragraph long enough to be one unit of the article.</p></article></body></html>";

  it("reads a sidecar's licence, treats a missing one as unknown, refuses an unreadable one", async () => {
    const folder = await temporaryDirectoryIn(cleanups, "sidecar-");
    const article = async (name: string) => {
      await writeFile(join(folder, name), html);
      return { absolutePath: join(folder, name), path: name, type: "article" as const };
    };
    const licensed = await article("licensed.html");
    await writeFile(join(folder, "licensed.html.license"), "SPDX-License-Identifier: MIT\n");
    expect((await prepareResource(licensed, folder)).record.licence).toBe("MIT");
    const bare = await article("bare.html");
    expect((await prepareResource(bare, folder)).record.licence_flag).toBe("unknown");
    // A folder where the sidecar should be: there but unreadable, so not "no licence".
    const broken = await article("broken.html");
    await mkdir(join(folder, "broken.html.license"));
    await expect(prepareResource(broken, folder)).rejects.toMatchObject({
      code: "core.file-unreadable",
      location: { file: join(folder, "broken.html.license") },
    });
  });
});
