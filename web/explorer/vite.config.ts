// The explorer's build: static files under dist/, served by `headwater serve` at /explore/ (web/explorer.go
// embeds them). File names carry no content hash so a rebuild of the same sources gives the same files
// (scripts/explorer.sh check); the server sends them with Cache-Control: no-cache.
import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 3000,
    rollupOptions: {
      output: { entryFileNames: "assets/explorer.js", chunkFileNames: "assets/[name].js", assetFileNames: "assets/[name][extname]" },
    },
  },
  server: { proxy: { "/graphql": process.env.HW_API ?? "http://127.0.0.1:8080" } },
  test: { include: ["src/**/*.test.ts"] },
});
