/**
 * Every test file's setup: an assertion on a promise (a store call whose `await` was forgotten) fails with that reason,
 * instead of passing (`toBeDefined`, `toBeTruthy`) or failing with a confusing diff. `.resolves` and `.rejects` are
 * for promises, and pass the settled value on.
 */
import { chai } from "vitest";

const isThenable = (value: unknown) => typeof (value as { then?: unknown } | null)?.then === "function";

chai.use((api, utils) => {
  for (const name of Object.getOwnPropertyNames(api.Assertion.prototype)) {
    if (!name.startsWith("to") || name === "toString") continue;
    const descriptor = Object.getOwnPropertyDescriptor(api.Assertion.prototype, name);
    if (typeof descriptor?.value !== "function") continue;
    utils.overwriteMethod(
      api.Assertion.prototype,
      name,
      (original: (...args: unknown[]) => unknown) =>
        function (this: object, ...args: unknown[]) {
          if (isThenable(utils.flag(this, "object")) && !utils.flag(this, "promise"))
            throw new Error(`expect(…).${name}: the value is a promise; await it first (or use .resolves or .rejects)`);
          return original.apply(this, args);
        },
    );
  }
});
