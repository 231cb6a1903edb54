/**
 * What a successful Prometheus answer must hold before anything reads it: a proxy or a broken
 * server can answer `{"status":"success","data":null}` or a matrix of the wrong shape, and that is
 * the upstream's fault (502), never an internal error. Checked once, where the answer arrives.
 */
import { PromError } from "./errors";
import type { PromMetadataEntry, PromQueryData } from "./types";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isSample = (v: unknown) => Array.isArray(v) && v.length === 2 && typeof v[0] === "number" && typeof v[1] === "string";
const isLabels = (v: unknown) => isObject(v) && Object.values(v).every((value) => typeof value === "string");

function wrong(what: string): PromError {
  return new PromError("bad_response", `Prometheus answered success, but its data is not ${what}`);
}

export function queryData(data: unknown): PromQueryData {
  if (!isObject(data) || typeof data.resultType !== "string") throw wrong("a query result (resultType and result)");
  const result = data.result;
  switch (data.resultType) {
    case "matrix":
      if (
        !Array.isArray(result) ||
        !result.every((s) => isObject(s) && isLabels(s.metric) && (s.values === undefined || (Array.isArray(s.values) && s.values.every(isSample))))
      )
        throw wrong("a matrix of series with [time, value] samples");
      break;
    case "vector":
      if (!Array.isArray(result) || !result.every((s) => isObject(s) && isLabels(s.metric) && (s.value === undefined || isSample(s.value))))
        throw wrong("a vector of series with a [time, value] sample");
      break;
    case "scalar":
    case "string":
      if (!isSample(result)) throw wrong(`a ${data.resultType} [time, value]`);
      break;
    default:
      throw wrong(`a known result type (got ${JSON.stringify(data.resultType).slice(0, 40)})`);
  }
  return data as unknown as PromQueryData;
}

export function labelSetList(data: unknown): Record<string, string>[] {
  if (!Array.isArray(data) || !data.every(isLabels)) throw wrong("a list of label sets");
  return data as Record<string, string>[];
}

export function stringList(data: unknown): string[] {
  if (!Array.isArray(data) || !data.every((v) => typeof v === "string")) throw wrong("a list of strings");
  return data as string[];
}

export function metadataMap(data: unknown): Record<string, PromMetadataEntry[]> {
  if (!isObject(data) || !Object.values(data).every(Array.isArray)) throw wrong("a metadata map");
  return data as Record<string, PromMetadataEntry[]>;
}
