import { openStore } from './clickhouse/store';
(async () => {
  const s = openStore({ database: 'probe', dataDir: '/tmp/probe-ch' });
  const r = await s.query(`SELECT arrayElement({t:Array(String)}, 2) AS x, {c:Array(Float64)} AS c, arrayFirstIndex(v -> v >= 0.5, {c:Array(Float64)}) AS i, {n:UInt64} AS n, toString({d:DateTime64(3, 'UTC')}) AS d`,
    { t: ["it's", 'x"y\\z'], c: [0.1, 0.6, 1], n: '18446744073709551615', d: '2026-01-01 00:00:00.000' });
  console.log(JSON.stringify(r));
  await s.close();
})().catch((e) => { console.error(e); process.exit(1); });
