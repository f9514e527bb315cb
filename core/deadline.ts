/**
 * Whether `p` settles (resolves or rejects) within `ms`. The timer is cleared either way, so a quick
 * answer leaves nothing pending; `p` itself runs on (its own outcome is the caller's to read).
 */
export function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([p.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}
