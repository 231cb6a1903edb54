/** A request's query parameters read by a handler's schema: empty ones are absent, and the first refusal is the 400. */
import type { z } from "zod";
import { badRequest } from "../../api/envelope";

export function queryParams<T extends z.ZodType>(schema: T, params: Record<string, string>): z.infer<T> {
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(params).filter(([, v]) => v !== "")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`parameter ${issue.path.join(".") || "?"}: ${issue.message}`);
  }
  return parsed.data;
}
