/**
 * The SQL AST: the only shape a report takes before it becomes text. Nodes are frozen plain objects
 * made by the factories below; the compiler (compiler.ts) is the one place that turns them into SQL.
 * Values only ever enter as `param` nodes (bound `{pN:Type}` placeholders); `literal` takes finite
 * numbers written in this codebase, never input.
 */
export type ChType =
  | 'String' | 'UUID' | 'UInt8' | 'UInt32' | 'UInt64' | 'Int64' | 'Float64' | 'Date'
  | "DateTime64(3, 'UTC')" | 'Array(String)';

export interface ColumnNode { readonly kind: 'column'; readonly name: string; readonly table?: string }
export interface ParamNode { readonly kind: 'param'; readonly type: ChType; readonly value: unknown }
export interface LiteralNode { readonly kind: 'literal'; readonly value: number }
export interface FuncNode {
  readonly kind: 'func'; readonly name: string; readonly args: readonly Expr[];
  /** Parameters of a parametric aggregate: quantileExactInclusive(0.5)(x). */
  readonly params?: readonly LiteralNode[];
}
export type BinaryOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/';
export interface BinaryNode { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr }
export interface AndNode { readonly kind: 'and'; readonly items: readonly Expr[] }
export interface OrNode { readonly kind: 'or'; readonly items: readonly Expr[] }
export interface NotNode { readonly kind: 'not'; readonly expr: Expr }
export interface InNode { readonly kind: 'in'; readonly expr: Expr; readonly set: Expr | SelectNode; readonly negated: boolean }
export interface AliasNode { readonly kind: 'alias'; readonly expr: Expr; readonly name: string }
export interface LambdaNode { readonly kind: 'lambda'; readonly args: readonly string[]; readonly body: Expr }
export interface ArrayNode { readonly kind: 'array'; readonly items: readonly Expr[] }
export interface TupleNode { readonly kind: 'tuple'; readonly items: readonly Expr[] }
export interface ScalarNode { readonly kind: 'scalar'; readonly select: SelectNode }
export interface StarNode { readonly kind: 'star' }

export type Expr =
  | ColumnNode | ParamNode | LiteralNode | FuncNode | BinaryNode | AndNode | OrNode | NotNode | InNode
  | AliasNode | LambdaNode | ArrayNode | TupleNode | ScalarNode | StarNode;

export interface TableNode {
  readonly kind: 'table'; readonly name: string; readonly final: boolean; readonly alias?: string;
  /** A system table (`system.<name>`) instead of one in the service's database. */
  readonly system?: boolean;
}
export interface SubqueryNode { readonly kind: 'subquery'; readonly select: SelectNode | UnionNode; readonly alias?: string }
export type Relation = TableNode | SubqueryNode;

export type JoinKind = 'INNER' | 'LEFT' | 'ASOF LEFT';
export interface JoinNode { readonly kind: 'join'; readonly join: JoinKind; readonly relation: Relation; readonly on: Expr }

export interface OrderItem { readonly expr: Expr; readonly dir: 'ASC' | 'DESC' }

export interface SelectNode {
  readonly kind: 'select';
  readonly columns: readonly Expr[];
  readonly from: Relation;
  readonly joins?: readonly JoinNode[];
  readonly where?: Expr;
  readonly groupBy?: readonly Expr[];
  readonly having?: Expr;
  readonly orderBy?: readonly OrderItem[];
  readonly limit?: Expr;
  readonly offset?: Expr;
  /** Engine settings written in code (names are identifiers, values are literals). */
  readonly settings?: Readonly<Record<string, number>>;
}

export interface UnionNode { readonly kind: 'union'; readonly selects: readonly SelectNode[] }

export type Node = Expr | Relation | JoinNode | SelectNode | UnionNode;

const freeze = <T extends object>(o: T): T => Object.freeze(o);

// ---- factories -------------------------------------------------------------------------------

export const col = (name: string, table?: string): ColumnNode => freeze({ kind: 'column', name, ...(table ? { table } : {}) });
export const param = (type: ChType, value: unknown): ParamNode => freeze({ kind: 'param', type, value });
export const str = (value: string) => param('String', value);
export const lit = (value: number): LiteralNode => freeze({ kind: 'literal', value });
export const fn = (name: string, ...args: Expr[]): FuncNode => freeze({ kind: 'func', name, args });
export const agg = (name: string, params: number[], ...args: Expr[]): FuncNode =>
  freeze({ kind: 'func', name, args, params: params.map(lit) });
export const bin = (op: BinaryOp, left: Expr, right: Expr): BinaryNode => freeze({ kind: 'binary', op, left, right });
export const eq = (l: Expr, r: Expr) => bin('=', l, r);

const isTrue = (e: Expr) => e.kind === 'literal' && e.value === 1;

/** AND of the given conditions: nested ANDs flattened, `undefined` and literal 1 dropped, repeats once. */
export function and(...items: (Expr | undefined)[]): Expr {
  const seen = new Set<string>();
  const flat = items
    .flatMap((e) => (e === undefined ? [] : e.kind === 'and' ? e.items : [e]))
    .filter((e) => !isTrue(e))
    .filter((e) => {
      const key = JSON.stringify(e);
      return seen.has(key) ? false : (seen.add(key), true);
    });
  if (flat.length === 0) return lit(1);
  return flat.length === 1 ? flat[0] : freeze({ kind: 'and', items: flat });
}

export function or(...items: Expr[]): Expr {
  const flat = items.flatMap((e) => (e.kind === 'or' ? e.items : [e]));
  if (flat.length === 0) return lit(0);
  return flat.length === 1 ? flat[0] : freeze({ kind: 'or', items: flat });
}

export const not = (expr: Expr): NotNode => freeze({ kind: 'not', expr });
export const inSet = (expr: Expr, set: Expr | SelectNode, negated = false): InNode => freeze({ kind: 'in', expr, set, negated });
export const as = (expr: Expr, name: string): AliasNode => freeze({ kind: 'alias', expr, name });
export const lambda = (args: string[], body: Expr): LambdaNode => freeze({ kind: 'lambda', args, body });
export const array = (...items: Expr[]): ArrayNode => freeze({ kind: 'array', items });
export const tuple = (...items: Expr[]): TupleNode => freeze({ kind: 'tuple', items });
export const scalar = (select: SelectNode): ScalarNode => freeze({ kind: 'scalar', select });
export const star = (): StarNode => freeze({ kind: 'star' });

export const table = (name: string, opts: { final?: boolean; alias?: string; system?: boolean } = {}): TableNode =>
  freeze({
    kind: 'table', name, final: opts.final ?? false,
    ...(opts.alias ? { alias: opts.alias } : {}), ...(opts.system ? { system: true } : {}),
  });
export const subquery = (select: SelectNode | UnionNode, alias?: string): SubqueryNode =>
  freeze({ kind: 'subquery', select, ...(alias ? { alias } : {}) });
export const join = (kind: JoinKind, relation: Relation, on: Expr): JoinNode => freeze({ kind: 'join', join: kind, relation, on });
export const union = (...selects: SelectNode[]): UnionNode => freeze({ kind: 'union', selects });

export function select(spec: Omit<SelectNode, 'kind'>): SelectNode {
  return freeze({ kind: 'select', ...spec });
}

export const asc = (expr: Expr): OrderItem => freeze({ expr, dir: 'ASC' });
export const desc = (expr: Expr): OrderItem => freeze({ expr, dir: 'DESC' });
