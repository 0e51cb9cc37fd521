import { describe, expect, it } from "vitest";
import { externalImages, fromLines, mapBaseImages, parseBaseImageMap } from "./task-image.js";

describe("Dockerfile FROM lines", () => {
  const dockerfile = [
    "FROM --platform=linux/amd64 ubuntu:24.04 AS build",
    "RUN make",
    "FROM build AS test",
    "FROM scratch",
    "from python:3.12-slim",
    "COPY --from=build /out /out",
    "",
  ].join("\n");

  it("names the images to get, not stages or scratch", () => {
    expect(fromLines(dockerfile).map((line) => line.image)).toEqual([
      "ubuntu:24.04",
      "build",
      "scratch",
      "python:3.12-slim",
    ]);
    expect(externalImages(dockerfile)).toEqual(["ubuntu:24.04", "python:3.12-slim"]);
  });

  it("maps only external images, keeping flags and stage names", () => {
    const { text, used } = mapBaseImages(dockerfile, {
      "ubuntu:24.04": "localhost/base:1",
      build: "must-not-apply",
    });
    expect(text.split("\n")[0]).toBe("FROM --platform=linux/amd64 localhost/base:1 AS build");
    expect(text.split("\n")[2]).toBe("FROM build AS test");
    expect(used).toEqual({ "ubuntu:24.04": "localhost/base:1" });
  });
});

describe("parseBaseImageMap", () => {
  it("reads from=to pairs, the last one for an image winning", () => {
    expect(parseBaseImageMap(["ubuntu:24.04=localhost/a", "ubuntu:24.04=localhost/b"])).toEqual({
      "ubuntu:24.04": "localhost/b",
    });
  });

  it("refuses a value without both sides", () => {
    for (const value of ["ubuntu:24.04", "=localhost/a", "ubuntu:24.04="]) {
      expect(() => parseBaseImageMap([value])).toThrow(
        /--base-image expects <image>=<local image>/,
      );
    }
  });
});
