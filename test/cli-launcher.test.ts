/**
 * The `skillsmith` command as npm links it: the shell launcher `dist/cli/skillsmith` starts a
 * `wiki search` without `NODE_EXTRA_CA_CERTS` (Node would read the file before any JavaScript)
 * and the bundle restores it. What must hold: the search answers as the full CLI does, and every
 * hand-over that could reach a model or an embedding API runs in a Node process that read the
 * user's original `NODE_EXTRA_CA_CERTS` at start.
 *
 * How the test sees which value a Node process started with: a certificate file that does not
 * exist makes Node print, at start, "Ignoring extra certs from `<path>`" naming the path it was
 * given. Each process started with the variable prints it once.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, symlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const root = resolve(import.meta.dirname, "..");
const launcher = resolve(root, "dist", "cli", "skillsmith");
const fullCli = resolve(root, "dist", "cli", "main.js");
const cleanups = cleanupsAfterEach();

/** Run `command argv` with NODE_EXTRA_CA_CERTS set to `certificates` (a path that is missing). */
function run(command: string, argv: readonly string[], certificates: string) {
  const environment: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: certificates };
  delete environment.SKILLSMITH_NODE_EXTRA_CA_CERTS;
  const result = spawnSync(command, argv, { encoding: "utf8", env: environment, cwd: root });
  const warning = `Ignoring extra certs from \`${certificates}\``;
  return {
    code: result.status,
    stdout: result.stdout,
    /** How many Node processes of this run read the user's certificate path at start. */
    startsWithCertificates: result.stderr.split(warning).length - 1,
  };
}

describe.skipIf(!existsSync(launcher))(
  "the skillsmith command (dist/, built by npm run build)",
  () => {
    it("is the package's bin, and is found through the links npm makes", async () => {
      const manifest = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
        bin: Record<string, string>;
      };
      expect(resolve(root, manifest.bin.skillsmith ?? "")).toBe(launcher);
      const folder = await temporaryDirectoryIn(cleanups, "skillsmith-launcher-links-");
      // node_modules/.bin/skillsmith → a relative link → the launcher.
      await symlink(launcher, join(folder, "absolute"));
      await symlink("absolute", join(folder, "skillsmith"));
      const version = spawnSync(join(folder, "skillsmith"), ["--version"], { encoding: "utf8" });
      const expected = spawnSync(process.execPath, [fullCli, "--version"], { encoding: "utf8" });
      expect(version.status).toBe(0);
      expect(version.stdout).toBe(expected.stdout);
    });

    it("starts a search without the certificates and hands over with the user's value", async () => {
      const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-launcher-wiki-");
      await cp(resolve(root, "examples", "wiki"), wiki, { recursive: true });
      const certificates = join(wiki, "no-such-bundle.pem");
      const search = ["wiki", "search", "navigation menu that wraps", "--wiki", wiki, "--json"];
      // The full CLI's answer (it writes the index, as `wiki build` leaves one).
      const expected = run(process.execPath, [fullCli, ...search], certificates);
      expect(expected.code).toBe(0);
      expect(expected.stdout).toContain('"shortlist"');
      expect(expected.startsWithCertificates).toBe(1);

      // Answered from the index: one Node process, started without the certificates.
      const answered = run(launcher, search, certificates);
      expect(answered).toEqual({ code: 0, stdout: expected.stdout, startsWithCertificates: 0 });

      // A command line the plain scan does not take (a strategy could be an embedding one, and
      // the full CLI would build a client for its API): run again by a Node process that read the
      // user's value at start.
      const strategy = run(launcher, [...search, "--strategy", "bm25-only"], certificates);
      expect(strategy).toEqual({ code: 0, stdout: expected.stdout, startsWithCertificates: 1 });

      // Every other command starts Node with the environment as given.
      const version = run(launcher, ["--version"], certificates);
      expect(version.code).toBe(0);
      expect(version.startsWithCertificates).toBe(1);
    });
  },
);
