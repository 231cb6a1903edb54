/**
 * Arrays of small records checked in one loop: a bundle holds hundreds of thousands (the replay 104,135 object writes
 * and as many audit requests), and checking them with a schema per record took twice as long in a fresh thread.
 */
import { z } from "zod";

/** Where in a record it is wrong (a field, or a path into one), and what is wrong there. */
export type Wrong = { wrong: PropertyKey[]; message: string };
/** A record's check: undefined when it is right. */
export type Check = (record: Record<string, unknown>) => Wrong | undefined;

export const wrong = (field: string, expected: string): Wrong => ({ wrong: [field], message: `expected ${expected}` });

export const isString = (value: unknown, maxLength: number): value is string => typeof value === "string" && value.length <= maxLength;
export const isInt = (value: unknown, min: number, max: number): value is number =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
export const isEpochMs = (value: unknown): value is number => isInt(value, 0, 8.64e15);
export const isIndex = (value: unknown): value is number => isInt(value, 0, Number.MAX_SAFE_INTEGER);
export const isOptional = <T>(value: unknown, check: (value: unknown) => value is T): value is T | undefined => value === undefined || check(value);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A field `known` does not list, refused in the words the schema's objects refuse one (a newer format's, or a mistake). */
export function unknownField(record: Record<string, unknown>, known: ReadonlySet<string>): Wrong | undefined {
  for (const key in record) if (!known.has(key)) return { wrong: [], message: `Unrecognized key: "${key}"` };
  return undefined;
}

/** The first wrong record of `values`, with its index first in the path; undefined when all are right. */
export function firstWrong(values: unknown, check: Check): Wrong | undefined {
  if (!Array.isArray(values)) return { wrong: [], message: "expected an array" };
  for (let i = 0; i < values.length; i++) {
    const record: unknown = values[i];
    const found = isRecord(record) ? check(record) : { wrong: [], message: "expected an object" };
    if (found) return { wrong: [i, ...found.wrong], message: found.message };
  }
  return undefined;
}

/** An array of records as a schema: checked in one loop (firstWrong), the first wrong one named by its path. */
export const recordsSchema = <T>(check: Check): z.ZodType<T[]> =>
  z.custom<T[]>().superRefine((values, ctx) => {
    const found = firstWrong(values, check);
    if (found) ctx.addIssue({ code: "custom", message: found.message, path: found.wrong });
  });
