/**
 * Renders a migration file for one deployment shape. Migration SQL is written once, for a single
 * node, with three markers:
 *   {db}            the database
 *   {on_cluster}    `ON CLUSTER <c>` in cluster mode, nothing otherwise
 *   {local:NAME}    NAME, or NAME_local in cluster mode (the shard-local table under a Distributed one)
 * and one directive line:
 *   -- @distributed NAME SHARDING_KEY   in cluster mode adds `NAME` as a Distributed table over NAME_local
 * In cluster mode every `*MergeTree(...)` engine becomes its `Replicated*` form, and a column change
 * (`ALTER TABLE {db}.{local:NAME} ... ADD|DROP|MODIFY|RENAME|COMMENT COLUMN`) is repeated on the
 * Distributed table NAME, whose columns would otherwise no longer match its shards'.
 */
export interface RenderTarget {
  database: string;
  cluster?: string;
}

const ENGINE_RE = /ENGINE\s*=\s*(Replacing|Aggregating|Summing|VersionedCollapsing|Collapsing)?MergeTree(?:\(([^)]*)\))?/;
const CREATE_TABLE_RE = /CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\.(\w+)/i;
const LOCAL_RE = /\{local:(\w+)\}/g;
const COLUMN_ALTER_RE = /^\s*ALTER\s+TABLE\b[\s\S]*\b(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i;
const NOT_COLUMN_ONLY_RE = /\b(INDEX|PROJECTION|CONSTRAINT|TTL|MATERIALIZE|UPDATE|DELETE|PARTITION|SETTING|FREEZE|ORDER\s+BY)\b/i;

/**
 * The replication path. Shard-local tables (`NAME_local`) replicate within their shard. Every other
 * table (metadata, schema_migrations) is small and read with FINAL on whichever node answers, so it
 * has ONE path for the whole cluster: every node holds all of it.
 */
function replicationPath(t: RenderTarget, table: string): string {
  return table.endsWith('_local')
    ? `/clickhouse/tables/{shard}/${t.database}/${table}`
    : `/clickhouse/tables/all/${t.database}/${table}`;
}

function replicate(statement: string, t: RenderTarget): string {
  const table = CREATE_TABLE_RE.exec(statement)?.[1];
  if (!table) return statement;
  return statement.replace(ENGINE_RE, (_m, kind: string | undefined, args: string | undefined) => {
    const zk = `'${replicationPath(t, table)}', '{replica}'`;
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

/** Split on statement-ending semicolons; `-- @distributed` lines stand alone. */
function splitStatements(sql: string, cluster: boolean, t: RenderTarget): string[] {
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
  return statements;
}

function substitute(s: string, t: RenderTarget, localSuffix: string): string {
  return s
    .replaceAll('{db}', t.database)
    .replace(/ ?\{on_cluster\}/g, t.cluster ? ` ON CLUSTER ${t.cluster}` : '')
    .replace(LOCAL_RE, (_m, n: string) => n + localSuffix);
}

/** Split into statements and render each for the target. */
export function renderMigration(sql: string, t: RenderTarget): string[] {
  const cluster = !!t.cluster;
  return splitStatements(sql, cluster, t).flatMap((s) => {
    if (!cluster) return [substitute(s, t, '')];
    const out = [replicate(substitute(s, t, '_local'), t)];
    // Judged without its comments: a comment above an ALTER must not hide it (nor its words count).
    const code = s.replace(/--.*$/gm, '');
    LOCAL_RE.lastIndex = 0;
    if (LOCAL_RE.test(code) && COLUMN_ALTER_RE.test(code) && !NOT_COLUMN_ONLY_RE.test(code)) out.push(substitute(s, t, ''));
    LOCAL_RE.lastIndex = 0;
    return out;
  });
}
