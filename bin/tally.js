#!/usr/bin/env node
// The CLI runs from the esbuild bundle; build it on first use so `npx tally` works right after `npm ci`.
const path = require('node:path');
const fs = require('node:fs');
const bundle = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(bundle)) {
  require('node:child_process').execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'build.mjs')], { stdio: 'ignore' });
}
require(bundle);
