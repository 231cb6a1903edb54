/**
 * `npm run store:copy -- --from <data dir> --to <postgres url>`: copies a SQLite store into a PostgreSQL database
 * (lib/store/copy.ts), resumable: run it again after a stop and it goes on where it was. The URL may come from
 * CHURNSCOPE_DATABASE_URL instead, to keep its password out of the process list. Stop the dashboard and the recorder
 * on the data directory first: what they write meanwhile would not be copied. Ends with each table's counts on both
 * sides; exit code 1 when they differ.
 */
import { readFileSync } from "node:fs";
import { CopyError, copyStore } from "../store/copy";
import { DatabaseUnavailableError, openPostgres } from "../store/engine/open-postgres";
import type { PostgresSettings } from "../store/engine/postgres";

const USAGE =
  "usage: npm run store:copy -- --from <data dir> [--to <postgres url>] [--tls disable|require|verify-full] [--ca <file>] [--chunk-rows N]\n" +
  "       (without --to, CHURNSCOPE_DATABASE_URL)";

interface Args {
  from: string;
  to: string;
  tls: PostgresSettings["tls"]["mode"];
  ca?: string;
  chunkRows: number;
}

function parseArgs(argv: string[]): Args {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === "--help" || flag === "-h") throw new CopyError(USAGE);
    if (!["--from", "--to", "--tls", "--ca", "--chunk-rows"].includes(flag)) throw new CopyError(`unknown argument ${flag}\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new CopyError(`${flag} needs a value\n${USAGE}`);
    values.set(flag, value);
  }
  const from = values.get("--from");
  const to = values.get("--to") ?? process.env.CHURNSCOPE_DATABASE_URL;
  if (!from) throw new CopyError(`--from is needed\n${USAGE}`);
  if (!to) throw new CopyError(`--to or CHURNSCOPE_DATABASE_URL is needed\n${USAGE}`);
  if (!/^postgres(ql)?:\/\//.test(to)) throw new CopyError("--to: expected a postgres:// or postgresql:// URL");
  const tls = values.get("--tls") ?? "disable";
  if (tls !== "disable" && tls !== "require" && tls !== "verify-full") throw new CopyError(`--tls: expected disable, require or verify-full, got ${tls}`);
  const chunkRows = Number(values.get("--chunk-rows") ?? 5000);
  if (!Number.isInteger(chunkRows) || chunkRows < 1 || chunkRows > 100_000) throw new CopyError("--chunk-rows: expected a whole number from 1 to 100000");
  return { from, to, tls, ca: values.get("--ca"), chunkRows };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const ca = args.ca ? readFileSync(args.ca, "utf8") : undefined;
  const target = await openPostgres(
    { url: args.to, poolSize: 2, tls: { mode: args.tls, ca }, connectTimeoutMs: 10_000, statementTimeoutMs: 300_000 },
    args.to === process.env.CHURNSCOPE_DATABASE_URL ? "CHURNSCOPE_DATABASE_URL" : "--to",
  );
  try {
    let shownAt = 0;
    const report = await copyStore({
      dataDir: args.from,
      target,
      chunkRows: args.chunkRows,
      onProgress(table, copied, total) {
        if (Date.now() - shownAt < 1000 && copied < total) return;
        shownAt = Date.now();
        console.error(`store-copy: ${table} ${copied}/${total}`);
      },
    });
    console.log(
      `store-copy: ${report.resumed ? "resumed; " : ""}${report.copiedRows} rows copied; ${report.bundles.target} of ${report.bundles.source} uploaded snapshots in the database${report.same ? "" : "; the counts differ"}`,
    );
    for (const t of report.tables)
      console.log(
        `  ${t.same ? "same" : "DIFFERENT"}  ${t.table.padEnd(22)} ${String(t.sourceRows).padStart(10)} → ${String(t.targetRows).padEnd(10)} ${t.sourceTimes ?? ""}`,
      );
    return report.same ? 0 : 1;
  } finally {
    await target.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`store-copy: ${error instanceof CopyError || error instanceof DatabaseUnavailableError ? error.message : (error.stack ?? error.message)}`);
    process.exit(error instanceof CopyError || error instanceof DatabaseUnavailableError ? 2 : 1);
  },
);
