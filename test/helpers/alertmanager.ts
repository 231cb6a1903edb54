/**
 * A real Alertmanager (Debian's prometheus-alertmanager) on loopback, configured from the documented
 * example with its Slack receiver pointed at a local HTTP server, so a test sees the exact message
 * Alertmanager renders from deploy/alerting/churnscope.tmpl.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { freePort, requireBinary, start, waitForHttp, type Running } from "./processes";
import { ROOT } from "./root";

export interface TestAlertmanager {
  url: string;
  /** resolves with the next message the receiver gets */
  nextMessage(): Promise<{ text: string; title: string }>;
  stop(): Promise<void>;
}

export async function startAlertmanager(churnscopeBase: string): Promise<TestAlertmanager> {
  const binary = requireBinary("prometheus-alertmanager", "install Debian's package: apt-get install -y prometheus-alertmanager");
  const dir = mkdtempSync(join(tmpdir(), "churnscope-am-"));
  const waiting: ((m: { text: string; title: string }) => void)[] = [];
  const queued: { text: string; title: string }[] = [];
  const receiver: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const attachment = (JSON.parse(body) as { attachments: { text: string; title: string }[] }).attachments[0];
      const message = { text: attachment.text, title: attachment.title };
      const next = waiting.shift();
      if (next) next(message);
      else queued.push(message);
      res.end("ok");
    });
  });
  const receiverPort = await freePort();
  await new Promise<void>((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve));

  // The documented files, with only the site-specific parts replaced.
  const template = readFileSync(join(ROOT, "deploy/alerting/churnscope.tmpl"), "utf8").replace("https://churnscope.example.com", churnscopeBase);
  writeFileSync(join(dir, "churnscope.tmpl"), template);
  writeFileSync(join(dir, "slack-webhook"), `http://127.0.0.1:${receiverPort}/slack`);
  const config = parse(readFileSync(join(ROOT, "deploy/alerting/alertmanager.example.yml"), "utf8"));
  config.templates = [join(dir, "churnscope.tmpl")];
  config.route = { ...config.route, group_by: ["alertname"], group_wait: "0s", group_interval: "1s", repeat_interval: "1h" };
  const slack = config.receivers[0].slack_configs[0];
  slack.api_url_file = join(dir, "slack-webhook");
  slack.send_resolved = true;
  writeFileSync(join(dir, "alertmanager.yml"), stringify(config));

  const port = await freePort();
  const running: Running = start(binary, [
    `--config.file=${join(dir, "alertmanager.yml")}`,
    `--storage.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--cluster.listen-address=",
  ]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/-/ready`, running, 30_000);
  return {
    url,
    nextMessage: () =>
      new Promise((resolve, reject) => {
        const queuedMessage = queued.shift();
        if (queuedMessage) return resolve(queuedMessage);
        const timer = setTimeout(() => reject(new Error(`no notification within 20 s:\n${running.output()}`)), 20_000);
        waiting.push((m) => {
          clearTimeout(timer);
          resolve(m);
        });
      }),
    stop: async () => {
      await running.stop();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}
