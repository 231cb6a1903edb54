"use client";
/** How a page's charts zoom: dragging across a chart hands the selected times to the page, which sets its range. */
import { createContext, useContext } from "react";

export type ZoomHandler = (aMs: number, bMs: number) => void;

export const ChartZoomContext = createContext<ZoomHandler | undefined>(undefined);

export const useChartZoom = () => useContext(ChartZoomContext);
