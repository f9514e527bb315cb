/**
 * Tasks of one key run one at a time, in arrival order (the next starts when the previous settles,
 * whether it resolved or threw). Per process. MetaTable.exclusive builds row edits on it.
 */
const tails = new Map<string, Promise<unknown>>();

export function serially<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const result = previous.then(task, task);
  const tail = result.then(() => undefined, () => undefined);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return result;
}
