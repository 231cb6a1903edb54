/** The tools test/tools/build.sh builds (VictoriaMetrics, Thanos, Prometheus 3, helm, Versity Gateway): where they are, or a failure that says how to build them. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export function toolBinary(name: "victoria-metrics" | "thanos" | "prometheus-3" | "helm" | "versitygw"): string {
  const dir = process.env.CHURNSCOPE_TOOLS_BIN ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "churnscope", "tools");
  const path = join(dir, name);
  if (!existsSync(path)) throw new Error(`no ${name} binary at ${path}: run \`bash test/tools/build.sh\` (needs Go; .ci/run does it)`);
  return path;
}
