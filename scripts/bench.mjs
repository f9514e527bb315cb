// Runs a benchmark written in TypeScript: `node scripts/bench.mjs bench/auth.ts [args...]`.
// Bundled with esbuild into dist/bench/ (dependencies stay external), then run in a child process.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/bench.mjs bench/<name>.ts [args...]');
  process.exit(2);
}
const outfile = path.join(root, 'dist/bench', path.basename(entry).replace(/\.ts$/, '.js'));
await build({ entryPoints: [path.resolve(entry)], outfile, bundle: true, platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
const r = spawnSync(process.execPath, [outfile, ...args], { stdio: 'inherit', env: { NODE_ENV: 'production', TALLY_LOG_LEVEL: 'silent', ...process.env } });
process.exit(r.status ?? 1);
