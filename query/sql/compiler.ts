import type {
  ChType, Expr, JoinNode, Node, OrderItem, Relation, SelectNode, UnionNode,
} from './ast';

/**
 * Lowers the SQL AST to ClickHouse SQL text plus bound parameters. The one place SQL text is made.
 * Every node kind has exactly one renderer in RENDER (a missing kind is a compile error); identifiers
 * are checked against IDENT, values become `{pN:Type}` placeholders, so nothing is ever escaped.
 */
export interface Compiled {
  sql: string;
  params: Record<string, unknown>;
}

export interface CompileOptions {
  /** The database every table name is qualified with (chDB ignores the client's default database). */
  database: string;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

class CompileState {
  readonly params: Record<string, unknown> = {};
  private readonly byKey = new Map<string, string>();
  constructor(readonly database: string) {}

  /** Equal (type, value) pairs share one placeholder, so the text stays readable and stable. */
  bind(type: ChType, value: unknown): string {
    const key = type + '\u0000' + JSON.stringify(value);
    let name = this.byKey.get(key);
    if (!name) {
      name = `p${this.byKey.size}`;
      this.byKey.set(key, name);
      this.params[name] = value;
    }
    return `{${name}:${type}}`;
  }
}

export function ident(name: string): string {
  if (!IDENT.test(name)) throw new Error(`not an identifier: ${JSON.stringify(name)}`);
  return name;
}

type Renderer<K extends Node['kind']> = (node: Extract<Node, { kind: K }>, s: CompileState, depth: number) => string;
type RenderTable = { [K in Node['kind']]: Renderer<K> };

const list = (items: readonly Expr[], s: CompileState, d: number) => items.map((e) => render(e, s, d)).join(', ');

const RENDER: RenderTable = {
  column: (n) => (n.table ? `${ident(n.table)}.${ident(n.name)}` : ident(n.name)),
  param: (n, s) => s.bind(n.type, n.value),
  literal: (n) => {
    if (!Number.isFinite(n.value)) throw new Error(`literal must be a finite number, got ${n.value}`);
    return String(n.value);
  },
  func: (n, s, d) => `${ident(n.name)}${n.params ? `(${list(n.params, s, d)})` : ''}(${list(n.args, s, d)})`,
  binary: (n, s, d) => `(${render(n.left, s, d)} ${n.op} ${render(n.right, s, d)})`,
  and: (n, s, d) => `(${n.items.map((e) => render(e, s, d)).join(' AND ')})`,
  or: (n, s, d) => `(${n.items.map((e) => render(e, s, d)).join(' OR ')})`,
  not: (n, s, d) => `NOT ${render(n.expr, s, d)}`,
  in: (n, s, d) =>
    `${render(n.expr, s, d)} ${n.negated ? 'NOT IN' : 'IN'} ${n.set.kind === 'select' ? `(${render(n.set, s, d + 1)})` : render(n.set, s, d)}`,
  alias: (n, s, d) => `${render(n.expr, s, d)} AS ${ident(n.name)}`,
  lambda: (n, s, d) => `(${n.args.map(ident).join(', ')}) -> ${render(n.body, s, d)}`,
  array: (n, s, d) => `[${list(n.items, s, d)}]`,
  tuple: (n, s, d) => `(${list(n.items, s, d)})`,
  scalar: (n, s, d) => `(${render(n.select, s, d + 1)})`,
  star: () => '*',
  table: (n, s) => `${n.system ? 'system' : ident(s.database)}.${ident(n.name)}${n.final ? ' FINAL' : ''}${n.alias ? ` AS ${ident(n.alias)}` : ''}`,
  subquery: (n, s, d) => `(${render(n.select, s, d + 1)})${n.alias ? ` AS ${ident(n.alias)}` : ''}`,
  join: (n, s, d) => `${n.join} JOIN ${render(n.relation, s, d)} ON ${render(n.on, s, d)}`,
  union: (n, s, d) => n.selects.map((x) => render(x, s, d)).join(d === 0 ? '\nUNION ALL\n' : ' UNION ALL '),
  select: (n, s, d) => renderSelect(n, s, d),
};

function renderSelect(n: SelectNode, s: CompileState, d: number): string {
  const order = (o: OrderItem) => `${render(o.expr, s, d)} ${o.dir}`;
  const clauses = [
    `SELECT ${list(n.columns, s, d)}`,
    `FROM ${render(n.from as Relation, s, d)}`,
    ...(n.joins ?? []).map((j: JoinNode) => render(j, s, d)),
    n.where && `WHERE ${render(n.where, s, d)}`,
    n.groupBy?.length && `GROUP BY ${list(n.groupBy, s, d)}`,
    n.having && `HAVING ${render(n.having, s, d)}`,
    n.orderBy?.length && `ORDER BY ${n.orderBy.map(order).join(', ')}`,
    n.limit && `LIMIT ${render(n.limit, s, d)}`,
    n.offset && `OFFSET ${render(n.offset, s, d)}`,
    n.settings && Object.keys(n.settings).length &&
      `SETTINGS ${Object.entries(n.settings).map(([k, v]) => `${ident(k)} = ${RENDER.literal({ kind: 'literal', value: v }, s, d)}`).join(', ')}`,
  ];
  return clauses.filter(Boolean).join(d === 0 ? '\n' : ' ');
}

function render(node: Node, s: CompileState, depth: number): string {
  const r = RENDER[node.kind] as Renderer<Node['kind']>;
  return r(node as never, s, depth);
}

export function compile(node: SelectNode | UnionNode, opts: CompileOptions): Compiled {
  const state = new CompileState(opts.database);
  const sql = render(node, state, 0);
  return { sql, params: state.params };
}
