"use client";
/** One catalog panel: fetches its data and renders it through the frame as a chart, or as one line when there is nothing to draw. */
import { PanelFrame } from "@/components/panels/panel-frame";
import { PanelNotShown } from "@/components/panels/panel-not-shown";
import { TimeSeriesChart, type ChartMarker } from "@/components/panels/time-series-chart";
import { usePanel, type PanelQueryInput } from "@/lib/query/hooks";
import type { PanelDef } from "@/lib/panels/queries";

interface Props {
  def: PanelDef;
  input: Omit<PanelQueryInput, "panel">;
  idleMessage?: string;
  className?: string;
  onSelectSeries?: (labels: Record<string, string>) => void;
  selectedName?: string;
  markers?: ChartMarker[];
  /** asked for only once this is true (it shows as loading until then) */
  ready?: boolean;
}

export function PanelCard({ def, input, idleMessage, className, onSelectSeries, selectedName, markers, ready = true }: Props) {
  const query = usePanel({ ...input, panel: def.id }, ready && !idleMessage && input.width > 0);
  // Every family the panel reads is missing here: one line at the end of its grid, naming them.
  if (query.data?.data.nothingToDraw) return <PanelNotShown id={def.id} title={def.title} reasons={query.data.infos} />;
  return (
    <PanelFrame id={def.id} title={def.title} description={def.description} state={query} idleMessage={idleMessage} className={className}>
      {(data) => (
        <TimeSeriesChart
          series={data.series}
          unit={data.unit}
          stacked={def.chart === "stacked"}
          startMs={data.startMs}
          endMs={data.endMs}
          onSelectSeries={onSelectSeries}
          selectedName={selectedName}
          markers={markers}
        />
      )}
    </PanelFrame>
  );
}
