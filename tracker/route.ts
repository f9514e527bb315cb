import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Router } from 'express';
import { projectRoot } from '../core/paths';

/**
 * GET /js/tally.js: the tracker built by tracker/build.mjs (part of `npm run build`, so `npm start`
 * always has it). A checkout that was never built (running the TypeScript sources under jest) builds
 * it on first request. One script for every site: the per-site behaviour (session strategy) is
 * decided by the server's answers, so the snippet never changes and caching it for an hour is safe.
 */
/** The script as built, and gzipped once (every visitor of every site fetches it: 2.7 KB -> 1.5 KB). */
interface Script { body: Buffer; gzipped: Buffer; etag: string }
let cached: Script | null = null;

function load(): Script {
  if (cached) return cached;
  const root = projectRoot();
  const file = path.join(root, 'dist', 'tally.js');
  if (!existsSync(file)) {
    const r = spawnSync(process.execPath, [path.join(root, 'tracker', 'build.mjs')], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tracker build failed: ${r.stderr}`);
  }
  const body = readFileSync(file);
  cached = { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
  return cached;
}

export default function trackerRoute(router: Router): void {
  router.get('/js/tally.js', (req, res) => {
    const script = load();
    res.set({
      'Content-Type': 'application/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
      'Access-Control-Allow-Origin': '*',
      ETag: script.etag,
      Vary: 'Accept-Encoding',
    });
    if (req.headers['if-none-match'] === script.etag) return void res.status(304).end();
    if (req.acceptsEncodings('gzip', 'identity') !== 'gzip') return void res.send(script.body);
    res.set('Content-Encoding', 'gzip').send(script.gzipped);
  });
}
