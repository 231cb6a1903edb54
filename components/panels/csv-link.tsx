"use client";
/** A table's "CSV" link: the file is built on click from the data on screen, so it holds exactly what the table shows. */
import { tableCsv } from "@/lib/format/csv";

export function CsvLink({
  name,
  header,
  rows,
  testId = "table-csv",
}: {
  name: string;
  header: readonly string[];
  rows: () => readonly (readonly (string | number | null)[])[];
  testId?: string;
}) {
  return (
    <a
      data-testid={testId}
      className="text-xs text-[var(--accent)] hover:underline"
      download={`${name}.csv`}
      href="#"
      onClick={(e) => {
        e.currentTarget.href = URL.createObjectURL(new Blob([tableCsv(header, rows())], { type: "text/csv" }));
      }}
    >
      CSV
    </a>
  );
}
