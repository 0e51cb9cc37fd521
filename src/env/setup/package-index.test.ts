import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probePackageIndex } from "./network.js";
import {
  localIndexPath,
  parsePipConfig,
  pipConfigFiles,
  pythonIndexSetupAccess,
  readPythonIndexConfiguration,
} from "./package-index.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-pip-config-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("parsePipConfig", () => {
  it("reads [global], lets [install] override it, and joins continued lines", () => {
    const text = [
      "# a comment",
      "[global]",
      "index_url = https://mirror.example/simple",
      "extra-index-url =",
      "    file:///srv/one/simple",
      "    file:///srv/two/simple",
      "timeout = 60",
      "[install]",
      "find-links: /srv/wheels",
      "[freeze]",
      "index-url = https://ignored.example/simple",
    ].join("\n");
    expect(parsePipConfig(text)).toEqual({
      "index-url": "https://mirror.example/simple",
      "extra-index-url": "file:///srv/one/simple file:///srv/two/simple",
      "find-links": "/srv/wheels",
    });
  });
});

describe("readPythonIndexConfiguration", () => {
  it("reads pip's files in pip's order, and pip's variables over them", async () => {
    const home = join(root, "home");
    const xdg = join(root, "xdg");
    await mkdir(join(home, ".config", "pip"), { recursive: true });
    await mkdir(join(xdg, "pip"), { recursive: true });
    await writeFile(
      join(xdg, "pip", "pip.conf"),
      "[global]\nindex-url = https://global.example/simple\nfind-links = /global/wheels\n",
    );
    await writeFile(
      join(home, ".config", "pip", "pip.conf"),
      "[global]\nextra-index-url = file:///opt/mirror/simple file:///opt/more/simple\nfind-links = /user/wheels\n",
    );
    const env = { HOME: home, XDG_CONFIG_DIRS: xdg };
    const fromFiles = await readPythonIndexConfiguration(env);
    expect(fromFiles).toMatchObject({
      indexUrl: "https://global.example/simple",
      extraIndexUrls: ["file:///opt/mirror/simple", "file:///opt/more/simple"],
      findLinks: ["/user/wheels"],
      trustedHosts: [],
    });
    expect(fromFiles.sources).toContain(
      `extra-index-url from ${join(home, ".config", "pip", "pip.conf")}`,
    );

    const withVariables = await readPythonIndexConfiguration({
      ...env,
      PIP_INDEX_URL: "https://private.example/simple",
      PIP_TRUSTED_HOST: "private.example",
    });
    expect(withVariables.indexUrl).toBe("https://private.example/simple");
    expect(withVariables.trustedHosts).toEqual(["private.example"]);
    expect(withVariables.sources).toContain("index-url from PIP_INDEX_URL");

    // pip loads no file at all when PIP_CONFIG_FILE is the null device.
    expect(pipConfigFiles({ ...env, PIP_CONFIG_FILE: "/dev/null" })).toEqual([]);
    expect(
      await readPythonIndexConfiguration({ ...env, PIP_CONFIG_FILE: "/dev/null" }),
    ).toMatchObject({ extraIndexUrls: [], findLinks: [] });
  });
});

describe("pythonIndexSetupAccess", () => {
  it("hands setup pip's variables and the local folders to mount, and nothing for the default index", () => {
    expect(
      pythonIndexSetupAccess({
        extraIndexUrls: ["file:///opt/pypi/simple", "https://remote.example/simple"],
        findLinks: ["/opt/wheels", "relative/wheels"],
        trustedHosts: [],
        sources: [],
      }),
    ).toEqual({
      env: {
        PIP_EXTRA_INDEX_URL: "file:///opt/pypi/simple https://remote.example/simple",
        PIP_FIND_LINKS: "/opt/wheels relative/wheels",
      },
      // The mirror's root: its pages link to files beside `simple/`.
      folders: ["/opt/pypi", "/opt/wheels"],
    });
    expect(
      pythonIndexSetupAccess({ extraIndexUrls: [], findLinks: [], trustedHosts: [], sources: [] }),
    ).toEqual({ env: {}, folders: [] });
    expect(localIndexPath("https://pypi.org/simple/")).toBeUndefined();
  });
});

describe("probePackageIndex with the user's pip configuration", () => {
  it("is online when a configured local mirror is there although the default index does not answer", async () => {
    const mirror = join(root, "mirror", "simple");
    await mkdir(mirror, { recursive: true });
    const probe = await probePackageIndex("python", {
      pythonIndex: {
        // Port 1 on the loopback refuses at once: the default index "does not answer".
        indexUrl: "http://127.0.0.1:1/simple/",
        extraIndexUrls: [`file://${mirror}`],
        findLinks: [join(root, "absent")],
        trustedHosts: [],
        sources: [],
      },
    });
    expect(probe.reachable).toBe(true);
    expect(probe.detail).toContain("http://127.0.0.1:1/simple/ did not answer");
    expect(probe.detail).toContain(`file://${mirror} is a folder on this machine`);
    expect(probe.detail).toContain(`${join(root, "absent")} is not there`);

    const nothing = await probePackageIndex("python", {
      pythonIndex: {
        indexUrl: "http://127.0.0.1:1/simple/",
        extraIndexUrls: [],
        findLinks: [join(root, "absent")],
        trustedHosts: [],
        sources: [],
      },
    });
    expect(nothing.reachable).toBe(false);
  });
});
