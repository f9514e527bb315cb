/**
 * Renders a migration file for one deployment shape. Migration SQL is written once, for a single
 * node, with three markers:
 *   {db}            the database
 *   {on_cluster}    `ON CLUSTER <c>` in cluster mode, nothing otherwise
 *   {local:NAME}    NAME, or NAME_local in cluster mode (the shard-local table under a Distributed one)
 * and one directive line:
 *   -- @distributed NAME SHARDING_KEY   in cluster mode adds `NAME` as a Distributed table over NAME_local
 * In cluster mode every `*MergeTree(...)` engine becomes its `Replicated*` form.
 */
export interface RenderTarget {
  database: string;
  cluster?: string;
}

const ENGINE_RE = /ENGINE\s*=\s*(Replacing|Aggregating|Summing|VersionedCollapsing|Collapsing)?MergeTree(?:\(([^)]*)\))?/;
const CREATE_TABLE_RE = /CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\.(\w+)/i;

function replicate(statement: string, t: RenderTarget): string {
  const table = CREATE_TABLE_RE.exec(statement)?.[1];
  if (!table) return statement;
  return statement.replace(ENGINE_RE, (_m, kind: string | undefined, args: string | undefined) => {
    const zk = `'/clickhouse/tables/{shard}/${t.database}/${table}', '{replica}'`;
    const rest = args && args.trim() ? `, ${args.trim()}` : '';
    return `ENGINE = Replicated${kind ?? ''}MergeTree(${zk}${rest})`;
  });
}

function distributed(line: string, t: RenderTarget): string {
  const [, , name, ...key] = line.trim().split(/\s+/);
  const c = t.cluster!;
  return (
    `CREATE TABLE IF NOT EXISTS ${t.database}.${name} ON CLUSTER ${c} AS ${t.database}.${name}_local\n` +
    `ENGINE = Distributed(${c}, ${t.database}, ${name}_local, ${key.join(' ')})`
  );
}

/** Split into statements and render each for the target. */
export function renderMigration(sql: string, t: RenderTarget): string[] {
  const cluster = !!t.cluster;
  const statements: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const text = current.join('\n').trim().replace(/;$/, '').trim();
    current = [];
    if (text.replace(/--.*$/gm, '').trim()) statements.push(text);
  };
  for (const line of sql.split('\n')) {
    if (line.trim().startsWith('-- @distributed')) {
      flush();
      if (cluster) statements.push(distributed(line, t));
      continue;
    }
    current.push(line);
    if (line.trimEnd().endsWith(';')) flush();
  }
  flush();
  return statements.map((s) => {
    const r = s
      .replaceAll('{db}', t.database)
      .replaceAll('{on_cluster}', cluster ? `ON CLUSTER ${t.cluster}` : '')
      .replace(/\{local:(\w+)\}/g, (_m, n: string) => (cluster ? `${n}_local` : n));
    return cluster ? replicate(r, t) : r;
  });
}
