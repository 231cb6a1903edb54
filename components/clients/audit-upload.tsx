"use client";
/**
 * Upload an audit log (plain or .gz) into the live store, with a progress bar while it travels and
 * the ingester's summary after. XMLHttpRequest rather than fetch: only it reports upload progress.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { flushSync } from "react-dom";
import type { ApiEnvelope } from "@/lib/api/envelope";
import { formatBytes } from "@/lib/format/number";
import type { IngestAnswer } from "@/lib/wire/audit";

type State =
  | { kind: "idle" }
  | { kind: "uploading"; sent: number; total: number }
  | { kind: "ingesting" }
  | { kind: "done"; answer: IngestAnswer; warnings: string[] }
  | { kind: "failed"; message: string };

export function AuditUpload() {
  const [file, setFile] = useState<File | null>(null);
  const [cluster, setCluster] = useState("default");
  const [state, setState] = useState<State>({ kind: "idle" });
  const queryClient = useQueryClient();
  const busy = state.kind === "uploading" || state.kind === "ingesting";

  const upload = () => {
    if (!file) return;
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/audit/uploads?${new URLSearchParams({ cluster })}`);
    // The server takes writes only with a body type no cross-site form can send.
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    // Drawn at once: a fast upload's last progress and its end arrive together, and batched, the bar
    // would jump from empty to "ingesting" without ever showing what was sent.
    xhr.upload.onprogress = (e) => flushSync(() => setState({ kind: "uploading", sent: e.loaded, total: e.lengthComputable ? e.total : file.size }));
    xhr.upload.onload = () => setState({ kind: "ingesting" });
    xhr.onerror = () => setState({ kind: "failed", message: "the upload did not reach the server (network error)" });
    xhr.onload = () => {
      let body: ApiEnvelope<IngestAnswer> | undefined;
      try {
        body = JSON.parse(xhr.responseText) as ApiEnvelope<IngestAnswer>;
      } catch {
        setState({ kind: "failed", message: `the server answered ${xhr.status} without JSON` });
        return;
      }
      if (body.status === "error") setState({ kind: "failed", message: body.error });
      else {
        setState({ kind: "done", answer: body.data, warnings: body.warnings });
        void queryClient.invalidateQueries();
      }
    };
    setState({ kind: "uploading", sent: 0, total: file.size });
    xhr.send(file);
  };

  return (
    <section data-testid="audit-upload" data-state={state.kind} className="space-y-2 rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 text-sm">
      <div className="flex flex-wrap items-center gap-3">
        <h2 className="font-semibold">Add an audit log</h2>
        <input
          type="file"
          aria-label="audit log file"
          accept=".log,.json,.jsonl,.gz,application/gzip,application/json,text/plain"
          disabled={busy}
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          className="text-xs"
        />
        <label className="flex items-center gap-1 text-xs">
          cluster
          <input
            value={cluster}
            onChange={(e) => setCluster(e.target.value)}
            disabled={busy}
            aria-label="cluster name"
            className="w-28 rounded border border-[var(--border)] bg-transparent px-1 py-0.5 font-mono"
          />
        </label>
        <button type="button" onClick={upload} disabled={!file || busy} className="rounded border border-[var(--border)] px-2 py-0.5 disabled:opacity-50">
          Upload and ingest
        </button>
        <span className="text-xs text-[var(--muted)]">
          audit.k8s.io Events as JSON (lines, jq or AWS CLI output, envelopes), plain or .gz. Larger logs:{" "}
          <code className="whitespace-nowrap">npm run ingest -- PATH</code>.
        </span>
      </div>
      {state.kind === "uploading" && (
        <div className="flex items-center gap-2 text-xs">
          <progress data-testid="upload-progress" max={state.total} value={state.sent} className="h-2 w-64" />
          <span className="tabular">
            {formatBytes(state.sent)} of {formatBytes(state.total)} ({Math.round((100 * state.sent) / Math.max(1, state.total))} %)
          </span>
        </div>
      )}
      {state.kind === "ingesting" && (
        <div className="flex items-center gap-2 text-xs">
          <progress data-testid="upload-progress" className="h-2 w-64" />
          <span>Uploaded; reading the log…</span>
        </div>
      )}
      {state.kind === "failed" && (
        <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-[var(--err-fg)]">
          {state.message}
        </p>
      )}
      {state.kind === "done" && (
        <div data-testid="upload-summary" className="text-xs">
          <p>
            {formatBytes(state.answer.bytes)} read in {state.answer.seconds.toFixed(1)} s into cluster <b>{state.answer.cluster}</b>.
          </p>
          <pre className="whitespace-pre-wrap text-[var(--muted)]">{state.answer.summary}</pre>
          {state.warnings.map((w) => (
            <p key={w} className="text-[var(--warn-fg)]">
              ⚠ {w}
            </p>
          ))}
        </div>
      )}
    </section>
  );
}
