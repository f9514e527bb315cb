import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of a process by thread group, from /proc (Linux). Groups: the JavaScript main thread
 * (tid = pid), libuv/V8 helper threads (named "node"), and the embedded engine's threads (anything
 * else: chDB names its pools QueryPipeline, MergeMutate, RuntimeData...). Milliseconds.
 */
export function cpuByThread(pid: number): Record<string, number> {
  const tick = 10; // USER_HZ is 100 on Linux: one tick is 10 ms
  const out: Record<string, number> = { js_main: 0, node_helpers: 0, engine: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * tick;
      const group = tid === String(pid) ? 'js_main' : comm === 'node' ? 'node_helpers' : 'engine';
      out[group] += ms;
    } catch {
      // the thread ended between listing and reading
    }
  }
  return out;
}

/** after − before per group (threads that ended in between take their time with them: a floor). */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.max(0, after[k] - (before[k] ?? 0))]));
}
