"use client";
/** "Open snapshot…": uploads a bundle (streamed, size-limited by the server) and opens it. */
import { useRef, useState } from "react";
import { fetchEnvelope } from "@/lib/api/fetch-envelope";
import type { SnapshotInfo } from "@/lib/snapshot/schema";

export function OpenSnapshot() {
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });

  const upload = async (file: File) => {
    setState({ busy: true });
    try {
      const info = await fetchEnvelope<SnapshotInfo>("/api/snapshots", undefined, { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
      // Opens on the page it was taken on.
      const page = { "write-load": "/", rebuilds: "/rebuilds", compare: "/compare", objects: "/objects" }[info.data.views[0]] ?? "/";
      window.location.assign(`${page}?snapshot=${info.data.id}`);
    } catch (error) {
      setState({ busy: false, error: error instanceof Error ? error.message : String(error) });
    }
  };

  return (
    <span className="flex items-center gap-2 text-sm">
      <button type="button" className="rounded border border-[var(--border)] px-2 py-1 hover:bg-[var(--bg)]" onClick={() => input.current?.click()} disabled={state.busy}>
        {state.busy ? "Opening…" : "Open snapshot…"}
      </button>
      <input
        ref={input}
        type="file"
        accept=".gz,.json,application/gzip,application/json"
        className="hidden"
        data-testid="snapshot-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (file) void upload(file);
          e.target.value = "";
        }}
      />
      {state.error && (
        <span role="alert" data-testid="snapshot-error" className="rounded bg-[var(--err-bg)] px-2 py-1 text-xs text-[var(--err-fg)]">
          Not opened: {state.error}
        </span>
      )}
    </span>
  );
}
