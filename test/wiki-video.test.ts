/**
 * The video connector on videos ffmpeg generates here: colour scenes cut at known times (the
 * key frames must be those times, and each frame must show its scene's colour), a continuous
 * video (equal windows), and a subtitle track inside the file when there is no side file.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import { prepareResource } from "../src/wiki/resources/collect.js";
import { hasFfmpeg, writeSceneVideo } from "./support/wiki.js";

let root: string;

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess("ffmpeg", ["-nostdin", "-v", "error", "-y", ...args]);
  if (result.exitCode !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${result.stderr}`);
}

/** The average colour of an image as [r, g, b], read back by ffmpeg (scaled to one pixel). */
async function averageColour(image: string): Promise<number[]> {
  const raw = `${image}.rgb`;
  await ffmpeg(["-i", image, "-vf", "scale=1:1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw]);
  return [...(await readFile(raw))].slice(0, 3);
}

const SRT = `1
00:00:00,500 --> 00:00:01,800
First, pick the red swatch.

2
00:00:02,200 --> 00:00:04,000
Then switch to <i>blue</i> for links.
`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-video-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.skipIf(!hasFfmpeg)("video key frames and transcripts (needs ffmpeg)", () => {
  it("puts key frames at the scene cuts and reads the transcript from a subtitle track in the file", async () => {
    const video = join(root, "tutorial.mp4");
    await writeSceneVideo(
      video,
      [
        { colour: "red", seconds: 2 },
        { colour: "blue", seconds: 3 },
        { colour: "lime", seconds: 1.5 },
      ],
      SRT,
    );
    const prepared = await prepareResource(
      { absolutePath: video, path: "tutorial.mp4", type: "video" },
      join(root, "work-1"),
    );
    // Cuts at 2 s (red → blue) and 5 s (blue → lime), as the test put them.
    expect(prepared.units.map((unit) => unit.atSeconds)).toEqual([0, 2, 5]);
    expect(prepared.record.key_frames).toMatchObject({
      method: "scene",
      scene_threshold: 0.3,
      times_seconds: [0, 2, 5],
      duration_seconds: 6.5,
    });
    expect(prepared.units[1]?.locator).toMatch(
      /^frame at 00:00:02 \(scene change, score 0\.\d+\)$/,
    );
    // Each frame shows its scene: red, blue, lime (yuv420p rounding allows a small error).
    const expected = [
      [255, 0, 0],
      [0, 0, 255],
      [0, 255, 0],
    ];
    for (const [index, unit] of prepared.units.entries()) {
      const colour = await averageColour(unit.imagePath ?? "");
      colour.forEach((channel, at) => {
        expect(Math.abs(channel - (expected[index]?.[at] ?? -999))).toBeLessThan(12);
      });
    }
    // The transcript came from the mov_text track: cue 1 (0.5–1.8 s) falls in the red scene,
    // cue 2 (2.2–4 s) in the blue one, nothing is spoken over the lime one.
    expect(prepared.record.transcript).toEqual({
      source: "embedded",
      from: "0:s:0",
      codec: "mov_text",
      language: "eng",
      cues: 2,
    });
    expect(prepared.record.companions).toEqual([]);
    expect(prepared.units.map((unit) => unit.text)).toEqual([
      "First, pick the red swatch.",
      "Then switch to blue for links.",
      "",
    ]);
    expect(prepared.context).toBe(
      "Transcript:\nFirst, pick the red swatch.\nThen switch to blue for links.",
    );
  });

  it("prefers a subtitle file beside the video to the track inside it", async () => {
    // A Matroska file with a SubRip track inside, and a different subtitle file beside it.
    const video = join(root, "sidecar.mkv");
    await writeSceneVideo(join(root, "plain.mp4"), [
      { colour: "red", seconds: 2 },
      { colour: "blue", seconds: 3 },
      { colour: "lime", seconds: 1.5 },
    ]);
    await writeFile(join(root, "track.srt"), SRT);
    await ffmpeg([
      "-i",
      join(root, "plain.mp4"),
      "-i",
      join(root, "track.srt"),
      "-map",
      "0:v",
      "-map",
      "1:s",
      "-c:v",
      "copy",
      "-c:s",
      "srt",
      video,
    ]);
    await writeFile(
      join(root, "sidecar.srt"),
      "1\n00:00:03,000 --> 00:00:03,900\nOnly the side file says this.\n",
    );
    const prepared = await prepareResource(
      { absolutePath: video, path: "sidecar.mkv", type: "video" },
      join(root, "work-2"),
    );
    expect(prepared.record.transcript).toEqual({
      source: "sidecar",
      from: "sidecar.srt",
      cues: 1,
    });
    expect(prepared.units.map((unit) => unit.text)).toEqual([
      "",
      "Only the side file says this.",
      "",
    ]);
  });

  it("samples equal windows from a video without a cut and records why", async () => {
    const video = join(root, "still.mp4");
    await ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "color=c=gray:s=160x120:d=5:r=10",
      "-pix_fmt",
      "yuv420p",
      video,
    ]);
    const prepared = await prepareResource(
      { absolutePath: video, path: "still.mp4", type: "video" },
      join(root, "work-3"),
    );
    // ceil(5 s / 2 s) = 3 windows; middles at 5/6, 5/2 and 25/6 s (rounded to ms in the record).
    expect(prepared.record.key_frames).toMatchObject({
      method: "equal-windows",
      fallback_reason: "1 scene at scene threshold 0.3, fewer than 2",
      times_seconds: [0.833, 2.5, 4.167],
    });
    expect(prepared.record.transcript).toEqual({ source: "none", cues: 0 });
    expect(prepared.units.map((unit) => unit.locator)).toEqual([
      "frame at 00:00:00",
      "frame at 00:00:02",
      "frame at 00:00:04",
    ]);
  });
});
