import { describe, expect, it } from "vitest";
import { chooseKeyFrames, DEFAULT_KEY_FRAME_SETTINGS, parseSubtitles } from "./video.js";

describe("chooseKeyFrames", () => {
  it("takes the opening frame and the first frame of every scene, each standing until the next cut", () => {
    const plan = chooseKeyFrames(6.5, [
      { atSeconds: 5, score: 0.5 },
      { atSeconds: 2, score: 0.4 },
    ]);
    expect(plan.method).toBe("scene");
    expect(plan.frames).toEqual([
      { atSeconds: 0, fromSeconds: 0, toSeconds: 2 },
      { atSeconds: 2, fromSeconds: 2, toSeconds: 5, sceneScore: 0.4 },
      { atSeconds: 5, fromSeconds: 5, toSeconds: 6.5, sceneScore: 0.5 },
    ]);
  });

  it("keeps the strongest cuts (earlier on ties) when there are more scenes than frames allowed", () => {
    // Ten cuts at 1..10 s; scores chosen so the seven strongest are known by hand:
    // 0.9 (4 s), 0.8 (9 s), 0.7 (2 s), 0.6 (7 s), then four at 0.5 (1, 3, 5, 8 s) of which the
    // three earliest (1, 3, 5 s) fit in the seven slots left beside the opening frame.
    const scores = [0.5, 0.7, 0.5, 0.9, 0.5, 0.35, 0.6, 0.5, 0.8, 0.31];
    const plan = chooseKeyFrames(
      11,
      scores.map((score, index) => ({ atSeconds: index + 1, score })),
    );
    expect(plan.frames.map((frame) => frame.atSeconds)).toEqual([0, 1, 2, 3, 4, 5, 7, 9]);
    expect(plan.frames).toHaveLength(DEFAULT_KEY_FRAME_SETTINGS.maxFrames);
    // The frame at 7 s stands until the next kept cut (9 s), not until the dropped one at 8 s.
    expect(plan.frames[6]).toMatchObject({ fromSeconds: 7, toSeconds: 9 });
  });

  it("falls back to the middles of equal windows when there is no cut, and says why", () => {
    const plan = chooseKeyFrames(5, []);
    expect(plan.method).toBe("equal-windows");
    // k = min(8, ceil(5 / 2)) = 3 windows of 5/3 s; their middles are 5/6, 5/2 and 25/6 s.
    expect(plan.frames.map((frame) => frame.atSeconds)).toEqual([5 / 6, 5 / 2, 25 / 6]);
    expect(plan.fallbackReason).toBe("1 scene at scene threshold 0.3, fewer than 2");
  });

  it("ignores cuts outside the video and falls back when scene detection was unavailable", () => {
    expect(
      chooseKeyFrames(4, [
        { atSeconds: 0, score: 1 },
        { atSeconds: 4, score: 1 },
      ]).method,
    ).toBe("equal-windows");
    const plan = chooseKeyFrames(4, undefined, DEFAULT_KEY_FRAME_SETTINGS, "timed out");
    expect(plan).toMatchObject({ method: "equal-windows", fallbackReason: "timed out" });
    expect(plan.frames.map((frame) => frame.atSeconds)).toEqual([1, 3]);
  });

  it("honours a stricter minimum of scene frames", () => {
    const plan = chooseKeyFrames(10, [{ atSeconds: 5, score: 0.9 }], {
      ...DEFAULT_KEY_FRAME_SETTINGS,
      minSceneFrames: 3,
    });
    expect(plan.method).toBe("equal-windows");
    expect(plan.frames).toHaveLength(5);
  });
});

describe("parseSubtitles", () => {
  it("reads SubRip as ffmpeg writes it from a mov_text track, dropping styling tags", () => {
    expect(
      parseSubtitles(
        "1\r\n00:00:00,500 --> 00:00:01,800\r\nFirst line\r\n\r\n2\r\n00:00:02,200 --> 00:00:04,000\r\nThen <i>blue</i>\r\n",
      ),
    ).toEqual([
      { startSeconds: 0.5, endSeconds: 1.8, text: "First line" },
      { startSeconds: 2.2, endSeconds: 4, text: "Then blue" },
    ]);
  });
});
