import type { Store } from '../clickhouse/store';
import type { SelectNode, UnionNode } from './sql/ast';
import { compile } from './sql/compiler';

/** Compile a SQL AST for this store's database and run it with its bound parameters. */
export function execute<T = Record<string, unknown>>(store: Store, node: SelectNode | UnionNode): Promise<T[]> {
  const { sql, params } = compile(node, { database: store.database });
  return store.query<T>(sql, params);
}

export type Exec = <T = Record<string, unknown>>(node: SelectNode | UnionNode) => Promise<T[]>;

export const executor = (store: Store): Exec => (node) => execute(store, node);
