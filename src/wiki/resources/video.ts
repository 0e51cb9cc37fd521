/**
 * Video connector: key frames sampled with ffmpeg at evenly spaced times (the middle of k equal
 * windows, so the sampling depends only on the duration), and a transcript from a `.srt` or
 * `.vtt` file beside the video. Each frame carries the transcript spoken during its window.
 */
import { join } from "node:path";
import { InfrastructureError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";
import type { ExtractedUnit } from "./types.js";

export interface Cue {
  readonly startSeconds: number;
  readonly endSeconds: number;
  readonly text: string;
}

const TIMESTAMP = /(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})/;

function seconds(stamp: string): number | undefined {
  const match = TIMESTAMP.exec(stamp);
  if (match === null) return undefined;
  const [, hours, minutes, secs, fraction] = match;
  return (
    Number(hours ?? 0) * 3600 +
    Number(minutes) * 60 +
    Number(secs) +
    Number((fraction ?? "0").padEnd(3, "0")) / 1000
  );
}

/** Cues of a SubRip or WebVTT file; malformed blocks are skipped. */
export function parseSubtitles(text: string): Cue[] {
  const cues: Cue[] = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n{2,}/)) {
    const lines = block.split("\n").filter((line) => line.trim() !== "");
    const timingIndex = lines.findIndex((line) => line.includes("-->"));
    if (timingIndex < 0) continue;
    const [left, right] = (lines[timingIndex] ?? "").split("-->");
    const start = seconds(left ?? "");
    const end = seconds(right ?? "");
    if (start === undefined || end === undefined) continue;
    const cueText = lines
      .slice(timingIndex + 1)
      .join(" ")
      .replace(/<[^>]+>/g, "")
      .replace(/\s+/g, " ")
      .trim();
    if (cueText !== "") cues.push({ startSeconds: start, endSeconds: end, text: cueText });
  }
  return cues;
}

export function clock(totalSeconds: number): string {
  const whole = Math.floor(totalSeconds);
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${pad(Math.floor(whole / 3600))}:${pad(Math.floor((whole % 3600) / 60))}:${pad(whole % 60)}`;
}

export async function probeDuration(videoPath: string): Promise<number> {
  const result = await runProcess(
    "ffprobe",
    [
      "-v",
      "error",
      "-show_entries",
      "format=duration",
      "-of",
      "default=noprint_wrappers=1:nokey=1",
      videoPath,
    ],
    { timeoutMs: 30_000 },
  );
  const duration = Number(result.stdout.trim());
  if (result.spawnError !== undefined)
    throw new InfrastructureError(
      "wiki.ffmpeg.missing",
      "ffprobe is not installed (apt-get install ffmpeg); video resources need it",
      { cause: result.spawnError },
    );
  if (result.exitCode !== 0 || !Number.isFinite(duration) || duration <= 0)
    throw new InfrastructureError(
      "wiki.video.probe",
      `ffprobe cannot read the duration of ${videoPath}: ${result.stderr.trim().slice(0, 300)}`,
    );
  return duration;
}

/** Seconds per sampled frame, and the most frames one video contributes. */
export const FRAME_SPACING_SECONDS = 2;
export const MAX_FRAMES = 8;

/** Sample key frames into `outputDir` and pair them with the transcript. */
export async function extractVideoUnits(
  videoPath: string,
  cues: readonly Cue[],
  outputDir: string,
): Promise<ExtractedUnit[]> {
  const duration = await probeDuration(videoPath);
  const count = Math.min(MAX_FRAMES, Math.max(1, Math.ceil(duration / FRAME_SPACING_SECONDS)));
  const window = duration / count;
  const units: ExtractedUnit[] = [];
  for (let index = 0; index < count; index += 1) {
    const at = window * (index + 0.5);
    const framePath = join(outputDir, `frame-${String(index).padStart(3, "0")}.png`);
    const result = await runProcess(
      "ffmpeg",
      [
        "-nostdin",
        "-v",
        "error",
        "-y",
        "-ss",
        at.toFixed(3),
        "-i",
        videoPath,
        "-frames:v",
        "1",
        "-vf",
        "scale=320:-2",
        framePath,
      ],
      { timeoutMs: 60_000 },
    );
    if (result.exitCode !== 0)
      throw new InfrastructureError(
        "wiki.video.frame",
        `ffmpeg could not sample a frame at ${at.toFixed(3)} s of ${videoPath}: ${result.stderr.trim().slice(0, 300)}`,
      );
    const from = window * index;
    const to = window * (index + 1);
    const spoken = cues
      .filter((cue) => cue.endSeconds > from && cue.startSeconds < to)
      .map((cue) => cue.text)
      .join(" ");
    units.push({
      index,
      kind: "frame",
      locator: `frame at ${clock(at)}`,
      text: spoken,
      imagePath: framePath,
      mediaType: "image/png",
    });
  }
  return units;
}
