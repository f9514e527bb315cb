import path from 'node:path';
import express, { type Router } from 'express';
import type { AppContext } from '../api/context';
import { projectRoot } from '../core/paths';

/** The public pages' scripts and styles: plain files, no build step, short cache. */
export default function publicAssets(router: Router, _app: AppContext): void {
  router.use(
    '/assets',
    express.static(path.join(projectRoot(), 'public', 'assets'), {
      index: false, fallthrough: true, maxAge: '5m',
      setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
    }),
  );
}
