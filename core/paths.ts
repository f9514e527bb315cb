import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The project root, found by walking up to package.json. Works the same from the TypeScript sources
 * (ts-jest) and from the esbuild bundle in dist/, so data files (migrations, geo db, tracker) resolve.
 */
let cached: string | null = null;
export function projectRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + __dirname);
    dir = up;
  }
  cached = dir;
  return dir;
}
