// Runs one TypeScript bench script: bundles it with esbuild (as scripts/build.mjs does) and executes it.
//   node bench/ingest/run.mjs bench/ingest/seed-bench.ts [args...]
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) throw new Error('usage: node bench/ingest/run.mjs <script.ts> [args...]');
const outfile = path.join(root, 'dist/bench', path.basename(entry).replace(/\.ts$/, '.js'));
await build({ entryPoints: [path.resolve(entry)], outfile, bundle: true, platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
const r = spawnSync(process.execPath, [outfile, ...args], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
