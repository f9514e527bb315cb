// Bundles the service and the CLI with esbuild (fast enough to run before every start), and the
// tracker script when its source exists. Type checking is `npm run lint` (tsc --noEmit).
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const common = { bundle: true, platform: 'node', target: 'node20', packages: 'external', sourcemap: true, logLevel: 'warning' };

await Promise.all([
  build({ ...common, entryPoints: [path.join(root, 'main.ts')], outfile: path.join(root, 'dist/main.js') }),
  build({ ...common, entryPoints: [path.join(root, 'cli/main.ts')], outfile: path.join(root, 'dist/cli.js') }),
]);

const tracker = path.join(root, 'tracker/build.mjs');
if (existsSync(tracker)) await import(tracker);
