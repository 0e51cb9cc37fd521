/**
 * Video connector: key frames at scene changes (ffmpeg's scene score, `select='gt(scene,T)'`),
 * falling back to evenly spaced times (the middle of k equal windows, which depends only on the
 * duration) when the video has too few scene changes; and a transcript from a `.srt` or `.vtt`
 * file beside the video, else from a text subtitle track inside the file (`-map 0:s:N`). Each
 * frame carries the transcript spoken while it is the current key frame.
 *
 * One file (a little over 400 lines) because key-frame choice, subtitle parsing and extraction are
 * one connector over one ffmpeg/ffprobe pipeline.
 */
import { join } from "node:path";
import { z } from "zod";
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
      "wiki.ffmpeg-missing",
      "ffprobe is not installed (apt-get install ffmpeg); video resources need it",
      { cause: result.spawnError },
    );
  if (result.exitCode !== 0 || !Number.isFinite(duration) || duration <= 0)
    throw new InfrastructureError(
      "wiki.video-probe",
      `ffprobe cannot read the duration of ${videoPath}: ${result.stderr.trim().slice(0, 300)}`,
    );
  return duration;
}

/** How key frames are chosen; every number is recorded in the resource manifest. */
export interface KeyFrameSettings {
  /** A frame whose scene score (0–1, ffmpeg's `scene`) exceeds this starts a new scene. */
  readonly sceneThreshold: number;
  /** Scene sampling is used when it yields at least this many key frames (the start + cuts). */
  readonly minSceneFrames: number;
  /** The most frames one video contributes (scene or equal-window sampling). */
  readonly maxFrames: number;
  /** Equal-window sampling: about one frame per this many seconds (then capped at maxFrames). */
  readonly frameSpacingSeconds: number;
}

/**
 * How every ffmpeg call of the wiki starts: never read the terminal (a build may run in the
 * background), print errors only (stderr is kept for the message).
 */
export const FFMPEG_QUIET = ["-nostdin", "-v", "error"] as const;

export const DEFAULT_KEY_FRAME_SETTINGS: KeyFrameSettings = {
  sceneThreshold: 0.3,
  minSceneFrames: 2,
  maxFrames: 8,
  frameSpacingSeconds: 2,
};

/** Seconds per sampled frame, and the most frames one video contributes (equal windows). */
export const FRAME_SPACING_SECONDS = DEFAULT_KEY_FRAME_SETTINGS.frameSpacingSeconds;
export const MAX_FRAMES = DEFAULT_KEY_FRAME_SETTINGS.maxFrames;

export interface SceneChange {
  readonly atSeconds: number;
  readonly score: number;
}

/** One chosen key frame and the span of the video it stands for. */
export interface KeyFrame {
  readonly atSeconds: number;
  readonly fromSeconds: number;
  readonly toSeconds: number;
  /** Scene sampling: the cut's scene score (absent for the opening frame). */
  readonly sceneScore?: number;
}

export interface KeyFramePlan {
  readonly method: "scene" | "equal-windows";
  /** Why equal windows were used, when they were. */
  readonly fallbackReason?: string;
  readonly frames: readonly KeyFrame[];
}

/**
 * Choose key frames from the scene changes ffmpeg found. Scene sampling: the opening frame
 * plus the first frame of every new scene; over `maxFrames`, the cuts with the highest scores
 * are kept (ties: the earlier cut), in time order. Fewer than `minSceneFrames` scenes (a
 * continuous screencast with no cut): the middles of k equal windows, k = min(maxFrames,
 * ⌈duration / frameSpacingSeconds⌉). Pure, so the choice is testable without a video.
 */
export function chooseKeyFrames(
  durationSeconds: number,
  changes: readonly SceneChange[] | undefined,
  settings: KeyFrameSettings = DEFAULT_KEY_FRAME_SETTINGS,
  unavailableReason?: string,
): KeyFramePlan {
  const cuts = (changes ?? [])
    .filter((change) => change.atSeconds > 0 && change.atSeconds < durationSeconds)
    .sort((left, right) => left.atSeconds - right.atSeconds);
  const sceneCount = cuts.length + 1;
  if (changes !== undefined && sceneCount >= settings.minSceneFrames) {
    let kept = cuts;
    if (sceneCount > settings.maxFrames) {
      const strongest = [...cuts]
        .sort((left, right) => right.score - left.score || left.atSeconds - right.atSeconds)
        .slice(0, settings.maxFrames - 1);
      kept = strongest.sort((left, right) => left.atSeconds - right.atSeconds);
    }
    const starts: { at: number; score?: number }[] = [
      { at: 0 },
      ...kept.map((cut) => ({ at: cut.atSeconds, score: cut.score })),
    ];
    return {
      method: "scene",
      frames: starts.map((start, index) => ({
        atSeconds: start.at,
        fromSeconds: start.at,
        toSeconds: starts[index + 1]?.at ?? durationSeconds,
        ...(start.score === undefined ? {} : { sceneScore: start.score }),
      })),
    };
  }
  const count = Math.min(
    settings.maxFrames,
    Math.max(1, Math.ceil(durationSeconds / settings.frameSpacingSeconds)),
  );
  const window = durationSeconds / count;
  const frames: KeyFrame[] = [];
  for (let index = 0; index < count; index += 1)
    frames.push({
      atSeconds: window * (index + 0.5),
      fromSeconds: window * index,
      toSeconds: window * (index + 1),
    });
  return {
    method: "equal-windows",
    fallbackReason:
      unavailableReason ??
      `${sceneCount} scene${sceneCount === 1 ? "" : "s"} at scene threshold ${settings.sceneThreshold}, fewer than ${settings.minSceneFrames}`,
    frames,
  };
}

const SCENE_TIMEOUT_MS = 300_000;

/**
 * The frames whose scene score exceeds `threshold`, with their times: one decoding pass of
 * ffmpeg (`select='gt(scene,T)'`, then `metadata=print` of `lavfi.scene_score`), on frames
 * scaled to 320 px wide so a long or large video stays cheap.
 */
export async function detectSceneChanges(
  videoPath: string,
  threshold: number,
): Promise<SceneChange[]> {
  const result = await runProcess(
    "ffmpeg",
    [
      ...FFMPEG_QUIET,
      "-i",
      videoPath,
      "-an",
      "-sn",
      "-vf",
      `scale=320:-2,select='gt(scene,${threshold})',metadata=print:file=-`,
      "-f",
      "null",
      "-",
    ],
    { timeoutMs: SCENE_TIMEOUT_MS },
  );
  if (result.spawnError !== undefined)
    throw new InfrastructureError(
      "wiki.ffmpeg-missing",
      "ffmpeg is not installed (apt-get install ffmpeg); video resources need it",
      { cause: result.spawnError },
    );
  if (result.timedOut || result.exitCode !== 0)
    throw new InfrastructureError(
      "wiki.video-scenes",
      result.timedOut
        ? `ffmpeg scene detection of ${videoPath} took longer than ${SCENE_TIMEOUT_MS / 1000} s`
        : `ffmpeg scene detection failed on ${videoPath}: ${result.stderr.trim().slice(0, 300)}`,
    );
  const changes: SceneChange[] = [];
  let at: number | undefined;
  for (const line of result.stdout.split("\n")) {
    const time = /pts_time:\s*(-?[0-9.]+)/.exec(line)?.[1];
    if (time !== undefined) {
      at = Number(time);
      continue;
    }
    const score = /^lavfi\.scene_score=([0-9.]+)/.exec(line.trim())?.[1];
    if (score !== undefined && at !== undefined && Number.isFinite(at)) {
      changes.push({ atSeconds: at, score: Number(score) });
      at = undefined;
    }
  }
  return changes;
}

/** What the video connector did, for the resource manifest. */
export interface VideoExtraction {
  readonly units: ExtractedUnit[];
  readonly plan: KeyFramePlan;
  readonly durationSeconds: number;
}

function locatorOf(frame: KeyFrame, method: KeyFramePlan["method"]): string {
  if (method === "equal-windows") return `frame at ${clock(frame.atSeconds)}`;
  return frame.sceneScore === undefined
    ? `frame at ${clock(frame.atSeconds)} (opening scene)`
    : `frame at ${clock(frame.atSeconds)} (scene change, score ${frame.sceneScore.toFixed(3)})`;
}

/** Choose key frames, extract them into `outputDir` and pair each with its transcript. */
export async function extractVideoUnits(
  videoPath: string,
  cues: readonly Cue[],
  outputDir: string,
  settings: KeyFrameSettings = DEFAULT_KEY_FRAME_SETTINGS,
): Promise<VideoExtraction> {
  const duration = await probeDuration(videoPath);
  let changes: SceneChange[] | undefined;
  let unavailable: string | undefined;
  try {
    changes = await detectSceneChanges(videoPath, settings.sceneThreshold);
  } catch (error) {
    // Scene detection is an improvement over equal windows, not a precondition: a video ffmpeg
    // can seek in but not fully decode in time still gets key frames.
    if (!(error instanceof InfrastructureError) || error.code === "wiki.ffmpeg-missing")
      throw error;
    unavailable = `scene detection unavailable: ${error.message}`;
  }
  const plan = chooseKeyFrames(duration, changes, settings, unavailable);
  const units: ExtractedUnit[] = [];
  for (const [index, frame] of plan.frames.entries()) {
    const framePath = join(outputDir, `frame-${String(index).padStart(3, "0")}.png`);
    const result = await runProcess(
      "ffmpeg",
      [
        ...FFMPEG_QUIET,
        "-y",
        "-ss",
        frame.atSeconds.toFixed(3),
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
        "wiki.video-frame",
        `ffmpeg could not sample a frame at ${frame.atSeconds.toFixed(3)} s of ${videoPath}: ${result.stderr.trim().slice(0, 300)}`,
      );
    const spoken = cues
      .filter((cue) => cue.endSeconds > frame.fromSeconds && cue.startSeconds < frame.toSeconds)
      .map((cue) => cue.text)
      .join(" ");
    units.push({
      index,
      kind: "frame",
      locator: locatorOf(frame, plan.method),
      text: spoken,
      imagePath: framePath,
      mediaType: "image/png",
      atSeconds: frame.atSeconds,
    });
  }
  return { units, plan, durationSeconds: duration };
}

/** Subtitle codecs ffmpeg can turn into SubRip text (bitmap tracks such as PGS cannot). */
const TEXT_SUBTITLE_CODECS = new Set(["subrip", "srt", "mov_text", "webvtt", "ass", "ssa", "text"]);

export interface EmbeddedTranscript {
  /** The ffmpeg stream specifier read, e.g. `0:s:0`. */
  readonly stream: string;
  readonly codec: string;
  readonly language?: string;
  readonly cues: Cue[];
}

const subtitleStreamsSchema = z.object({
  streams: z
    .array(
      z.object({
        codec_name: z.string().optional(),
        tags: z.object({ language: z.string().optional() }).partial().optional(),
      }),
    )
    .optional(),
});

/**
 * The transcript of the first text subtitle track inside the video (SubRip, mov_text, WebVTT,
 * ASS), converted to SubRip by ffmpeg; undefined when the file has none.
 */
export async function embeddedTranscript(
  videoPath: string,
): Promise<EmbeddedTranscript | undefined> {
  const probe = await runProcess(
    "ffprobe",
    [
      "-v",
      "error",
      "-select_streams",
      "s",
      "-show_entries",
      "stream=codec_name:stream_tags=language",
      "-of",
      "json",
      videoPath,
    ],
    { timeoutMs: 30_000 },
  );
  if (probe.spawnError !== undefined)
    throw new InfrastructureError(
      "wiki.ffmpeg-missing",
      "ffprobe is not installed (apt-get install ffmpeg); video resources need it",
      { cause: probe.spawnError },
    );
  if (probe.exitCode !== 0) return undefined;
  let streams: z.infer<typeof subtitleStreamsSchema>["streams"];
  try {
    streams = subtitleStreamsSchema.parse(JSON.parse(probe.stdout)).streams;
  } catch {
    // The embedded track is an optional probe: an answer we cannot read, like a failed probe
    // above, means "no embedded transcript" and the manifest records transcript source "none".
    return undefined;
  }
  const position = (streams ?? []).findIndex((stream) =>
    TEXT_SUBTITLE_CODECS.has(stream.codec_name ?? ""),
  );
  const chosen = streams?.[position];
  if (chosen === undefined) return undefined;
  const stream = `0:s:${position}`;
  const extracted = await runProcess(
    "ffmpeg",
    [...FFMPEG_QUIET, "-i", videoPath, "-map", stream, "-f", "srt", "-"],
    { timeoutMs: 60_000 },
  );
  if (extracted.exitCode !== 0)
    throw new InfrastructureError(
      "wiki.video-subtitles",
      `ffmpeg could not read subtitle track ${stream} of ${videoPath}: ${extracted.stderr.trim().slice(0, 300)}`,
    );
  return {
    stream,
    codec: chosen.codec_name ?? "unknown",
    ...(chosen.tags?.language === undefined ? {} : { language: chosen.tags.language }),
    cues: parseSubtitles(extracted.stdout),
  };
}
