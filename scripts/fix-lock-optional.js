// Restores package-lock.json entries for optional platform binaries (other OS/CPU builds of chDB,
// msgpackr-extract, ...). npm drops them when the registry it resolves against cannot serve them, and
// `npm ci` then refuses the lock ("Missing: ... from lock file") on every fresh clone. The entries
// carry version and platform only: npm skips them on other platforms without fetching anything.
//   node scripts/fix-lock-optional.js [package-lock.json]
const fs = require('fs');
const file = process.argv[2] ?? require('path').join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const platform = (name) => {
  const s = name.split('/').pop();
  const os = ['darwin', 'win32', 'android', 'freebsd', 'openharmony', 'linux'].find((o) => s.includes(`-${o}-`));
  const cpu = ['arm64', 'x64', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'arm'].find((c) => new RegExp(`-${c}(-|$)`).test(s.slice(s.indexOf(os) + os.length)));
  const libc = /-gnu(eabihf)?$/.test(s) ? 'glibc' : /-musl(eabihf)?$/.test(s) ? 'musl' : undefined;
  return { os, cpu, libc };
};
const added = [];
for (const [key, p] of Object.entries(pkgs)) {
  for (const [dep, version] of Object.entries(p.optionalDependencies ?? {})) {
    const path = `node_modules/${dep}`;
    if (pkgs[path]) continue;
    const { os, cpu, libc } = platform(dep);
    if (!os || !cpu) throw new Error(`cannot tell the platform of ${dep}`);
    const sibling = Object.entries(pkgs).find(([k]) => k.startsWith(path.replace(/[^/]+$/, '')) && k !== path && pkgs[k].optional && k.split('/').slice(0, -1).join('/') === path.split('/').slice(0, -1).join('/'));
    pkgs[path] = { version, cpu: [cpu], ...(sibling?.[1].dev ? { dev: true } : {}), ...(libc ? { libc: [libc] } : {}), license: sibling?.[1].license, optional: true, os: [os] };
    added.push(`${dep}@${version} ${os}/${cpu}${libc ? '/' + libc : ''}`);
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(added.join('\n'));
