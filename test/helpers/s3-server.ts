/**
 * A real S3 server for the audit bucket tests: Versity Gateway (built by test/tools/build.sh) over a temporary
 * directory, on a free loopback port, with one root user; and an SDK client of it for the test to fill buckets.
 */
import { S3Client } from "@aws-sdk/client-s3";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, start, waitForHttp } from "./processes";
import { toolBinary } from "./tools";

export interface TestS3 {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  client: S3Client;
  stop(): Promise<void>;
}

export async function startS3(): Promise<TestS3> {
  const bin = toolBinary("versitygw");
  const dir = mkdtempSync(join(tmpdir(), "churnscope-s3-"));
  mkdirSync(join(dir, "buckets"));
  mkdirSync(join(dir, "meta"));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const accessKeyId = "churnscope-test";
  const secretAccessKey = `secret-${process.pid}-${port}`;
  // Object metadata (ETags) in a directory of its own: the temp directory's file system may lack extended attributes.
  const running = start(bin, [
    "--access",
    accessKeyId,
    "--secret",
    secretAccessKey,
    "--port",
    `127.0.0.1:${port}`,
    "--health",
    "/health",
    "posix",
    "--sidecar",
    join(dir, "meta"),
    join(dir, "buckets"),
  ]);
  const stop = async () => {
    client.destroy();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const client = new S3Client({ region: "us-east-1", endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  try {
    await waitForHttp(`${endpoint}/health`, running, 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, accessKeyId, secretAccessKey, client, stop };
}
