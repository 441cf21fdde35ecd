// Bundles src/main.js (sigma, graphology, the ForceAtlas2 worker) into ../static/graph/graph.js, and src/local.js (a
// memory page's local graph) into ../static/graph/local.js.
// `make frontend` runs it after `npm ci`; the output is gitignored and served by Django's static files.
import { build } from "esbuild";
import { mkdir, writeFile } from "node:fs/promises";

const outdir = new URL("../static/graph/", import.meta.url).pathname;
await mkdir(outdir, { recursive: true });
const result = await build({
  entryPoints: { graph: "src/main.js", local: "src/local.js" },
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outdir,
  legalComments: "linked",
  metafile: true,
  logLevel: "warning",
});
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
await writeFile(`${outdir}.built`, `${new Date().toISOString()}\n`);
console.log(`static/graph/graph.js and local.js built (${Math.round(bytes / 1024)} KiB)`);
