/**
 * One read-modify-write at a time per resource, in arrival order. Metadata rows are stored as whole-row
 * versions (the newest wins), so two concurrent PATCHes of different fields of one row would each
 * write back the row they read, and the later would silently drop the earlier's change; two racing
 * first PUTs of a share board would each mint a slug, and one answered URL would never work. Callers
 * read the row inside the task, after the previous writer has finished.
 *
 * The queue is per process: in server mode two API processes can still race on one row (noted in
 * docs/RESOURCES.md). Keys are the resource kind and its id.
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
