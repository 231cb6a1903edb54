// Lint: the recommended JavaScript and TypeScript rules, no unused code, and the rules of hooks in
// React code. Layering and import circles are checked by test/unit/layers.test.ts.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: [".next/**", ".next-standalone/**", "node_modules/**", "test-results/**", "next-env.d.ts", "data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    rules: { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }] },
  },
  {
    // The store answers with promises on both engines: one left unawaited is a write that may land after its batch, or an error nobody sees.
    files: ["lib/**/*.ts", "test/**/*.ts", "instrumentation.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { "@typescript-eslint/no-floating-promises": "error", "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }] },
  },
  {
    // React code; the tests' use… helpers are not hooks.
    files: ["app/**/*.tsx", "components/**/*.{ts,tsx}", "lib/query/**/*.ts"],
    plugins: { "react-hooks": reactHooks },
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error" },
  },
  {
    files: ["**/*.{cjs,mjs,js}"],
    languageOptions: {
      globals: {
        require: "readonly",
        module: "writable",
        process: "readonly",
        console: "readonly",
        __dirname: "readonly",
        globalThis: "readonly",
        setTimeout: "readonly",
        Symbol: "readonly",
      },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
