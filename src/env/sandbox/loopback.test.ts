import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isModelApiRequest, startCredentialProxy } from "./loopback.js";

describe("isModelApiRequest", () => {
  it("passes the model API paths each harness calls, with or without /v1 and the upstream's path", () => {
    expect(isModelApiRequest("POST", "/v1/messages?beta=true", "")).toBe(true);
    expect(isModelApiRequest("POST", "/v1/messages/count_tokens", "")).toBe(true);
    expect(isModelApiRequest("POST", "/v1/responses", "")).toBe(true);
    expect(isModelApiRequest("POST", "/proxy/v1/chat/completions", "/proxy")).toBe(true);
    expect(isModelApiRequest("POST", "/v1/responses", "/v1")).toBe(true);
    expect(isModelApiRequest("GET", "/v1/models", "")).toBe(true);
    expect(isModelApiRequest("GET", "/models/claude-haiku-4-5", "")).toBe(true);
  });

  it("refuses every other path, method and spelling", () => {
    for (const [method, url, base] of [
      ["GET", "/v1/files", ""],
      ["POST", "/v1/messages/batches", ""],
      ["GET", "/v1/organizations/api_keys", ""],
      ["POST", "/v1/fine_tuning/jobs", ""],
      ["DELETE", "/v1/models/x", ""],
      ["GET", "/v1/messages", ""],
      ["POST", "/v1/messages/../files", ""],
      ["POST", "/v1/messages%2F..%2Ffiles", ""],
      ["POST", "//v1/messages", ""],
      ["POST", "/v1/messages", "/proxy"],
      ["POST", "/", ""],
    ] as const) {
      expect({ method, url, allowed: isModelApiRequest(method, url, base) }).toEqual({
        method,
        url,
        allowed: false,
      });
    }
    expect(isModelApiRequest(undefined, "/v1/messages", "")).toBe(false);
  });
});

describe("startCredentialProxy", () => {
  let upstream: Server;
  const seen: { path: string | undefined; key: string | undefined }[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      seen.push({ path: request.url, key: request.headers["x-api-key"] as string | undefined });
      request.resume();
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", () => resolve()));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it("forwards a model call with the real key and refuses another path without forwarding it", async () => {
    const { port } = upstream.address() as AddressInfo;
    const proxy = await startCredentialProxy({
      upstream: `http://127.0.0.1:${port}`,
      apiKey: "real-key",
    });
    try {
      const call = (path: string) =>
        fetch(`${proxy.url}${path}`, {
          method: "POST",
          headers: { "x-api-key": proxy.dummyKey, "content-type": "application/json" },
          body: "{}",
        });
      const model = await call("/v1/messages");
      expect(model.status).toBe(200);
      const other = await call("/v1/files");
      expect(other.status).toBe(403);
      expect(await other.text()).toContain("/v1/files is not a model API path");
      expect(seen).toEqual([{ path: "/v1/messages", key: "real-key" }]);
    } finally {
      await proxy.close();
    }
  });
});
