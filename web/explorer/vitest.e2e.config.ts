// The explorer's browser tests (e2e/*.e2e.ts): one file, its steps in order, against a running headwater serve
// (scripts/explorer.sh e2e, started by the Go test e2e/explorer_test.go).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 90_000,
    hookTimeout: 180_000,
  },
});
