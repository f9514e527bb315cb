// Builds the tracker (tracker/src/tally.ts) into dist/tally.js, minified, and checks the size budget
// of PRODUCT.md §3: under 2 KB gzipped. Imported by scripts/build.mjs; also runnable alone.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
export const trackerOut = path.join(root, 'dist/tally.js');

await build({
  entryPoints: [path.join(root, 'tracker/src/tally.ts')],
  outfile: trackerOut,
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2019',
  logLevel: 'warning',
});

const gz = gzipSync(readFileSync(trackerOut)).length;
if (gz >= 2048) throw new Error(`tracker is ${gz} bytes gzipped; the budget is under 2048`);
