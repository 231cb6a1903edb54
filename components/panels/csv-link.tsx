"use client";
/**
 * A table's "CSV" link: the file is built on click from the data on screen, so it holds exactly what the table shows;
 * or, for a list too long to keep on screen (a timeline's writes), from what the API answers on click.
 */
import { useState } from "react";
import { tableCsv } from "@/lib/format/csv";

type Rows = readonly (readonly (string | number | null)[])[];

export function CsvLink({
  name,
  header,
  rows,
  testId = "table-csv",
}: {
  /** the file's name without .csv, or, for rows fetched on click, a name that can say what they hold */
  name: string | ((rows: Rows) => string);
  header: readonly string[];
  rows: () => Rows | Promise<Rows>;
  testId?: string;
}) {
  const [state, setState] = useState<"idle" | "busy" | string>("idle");
  return (
    <a
      data-testid={testId}
      className="text-xs text-[var(--accent)] hover:underline"
      href="#"
      aria-busy={state === "busy"}
      title={state !== "idle" && state !== "busy" ? state : undefined}
      onClick={(e) => {
        e.preventDefault();
        if (state === "busy") return;
        setState("busy");
        Promise.resolve()
          .then(rows)
          .then(
            (table) => {
              const link = document.createElement("a");
              link.download = `${typeof name === "string" ? name : name(table)}.csv`;
              link.href = URL.createObjectURL(new Blob([tableCsv(header, table)], { type: "text/csv" }));
              link.click();
              setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
              setState("idle");
            },
            (error: Error) => setState(`CSV failed: ${error.message}`),
          );
      }}
    >
      {state === "busy" ? "CSV…" : state === "idle" ? "CSV" : "CSV failed: retry"}
    </a>
  );
}
