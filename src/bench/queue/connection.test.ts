import { describe, expect, it } from "vitest";
import { UsageError } from "../../core/errors.js";
import { parseRedisUrl, reconnectDelayMs, redactRedisUrl } from "./connection.js";

describe("parseRedisUrl", () => {
  it("reads host, port and database of a plain URL", () => {
    expect(parseRedisUrl("redis://10.0.0.5:6380/2")).toEqual({
      host: "10.0.0.5",
      port: 6380,
      db: 2,
    });
  });

  it("defaults to port 6379 and database 0", () => {
    expect(parseRedisUrl("redis://queue.internal")).toEqual({
      host: "queue.internal",
      port: 6379,
      db: 0,
    });
  });

  it("turns rediss:// into TLS checked against the host name, with password and user", () => {
    expect(parseRedisUrl("rediss://:s3cret@redis.example.org:6380/1")).toEqual({
      host: "redis.example.org",
      port: 6380,
      db: 1,
      password: "s3cret",
      tls: { servername: "redis.example.org" },
    });
    expect(parseRedisUrl("rediss://bench:p%40ss%3Aword@redis.example.org/4")).toEqual({
      host: "redis.example.org",
      port: 6379,
      db: 4,
      username: "bench",
      password: "p@ss:word",
      tls: { servername: "redis.example.org" },
    });
  });

  it("accepts a bracketed IPv6 address", () => {
    expect(parseRedisUrl("redis://[::1]:7000/0")).toMatchObject({ host: "::1", port: 7000 });
  });

  it("refuses other schemes, a non-numeric database and garbage, naming the flag", () => {
    for (const bad of [
      "http://127.0.0.1:6379/0",
      "redis://127.0.0.1:6379/zero",
      "redis://127.0.0.1:6379/1/2",
      "127.0.0.1:6379",
    ]) {
      expect(() => parseRedisUrl(bad)).toThrow(UsageError);
      expect(() => parseRedisUrl(bad)).toThrow(/--queue/);
    }
  });

  it("never repeats a password in its error message", () => {
    expect(() => parseRedisUrl("redis://:hunter2@")).toThrow(UsageError);
    try {
      parseRedisUrl("redis://:hunter2@");
    } catch (error) {
      expect((error as Error).message).not.toContain("hunter2");
    }
  });
});

describe("redactRedisUrl", () => {
  it("replaces the password and keeps the rest", () => {
    expect(redactRedisUrl("rediss://bench:s3cret@host:6380/1")).toBe(
      "rediss://bench:***@host:6380/1",
    );
    expect(redactRedisUrl("redis://:s3cret@host/0")).toBe("redis://:***@host/0");
    expect(redactRedisUrl("redis://host:6379/0")).toBe("redis://host:6379/0");
  });
});

describe("reconnectDelayMs", () => {
  it("doubles from 250 ms and stays at 10 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(reconnectDelayMs)).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });
});
