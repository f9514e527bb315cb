import { lowerOverview, OVERVIEW_FIELDS } from '../lower/overview';
import { ESTIMATE_EXACT_BELOW } from '../registry/metrics';
import { figures, numbers, rangeMeta, type ReportRunner, type Row } from './shared';

/**
 * The visitors figure above ESTIMATE_EXACT_BELOW: the rollup's estimate (within 1%), but never under
 * the exact count of new visitors, which are visitors of the window too. An estimate a little low
 * made one answer say more new visitors than visitors (and 0 returning); raising it to the exact
 * lower bound only brings it closer to the truth.
 */
export const shownEstimate = (estimate: number, newVisitors: number): number => Math.max(estimate, newVisitors);

export const runOverview: ReportRunner = async (q, exec) => {
  const s = lowerOverview(q);
  const none = Promise.resolve([] as Row[]);
  const [events, goals, sessions, first, payments] = await Promise.all([
    exec<Row>(s.events), s.goals ? exec<Row>(s.goals) : none, exec<Row>(s.sessions), exec<Row>(s.firstSeen), exec<Row>(s.payments),
  ]);
  let paid = numbers(payments[0]);
  // Attribution joins sessions; skip it when the window has no payment at all.
  if (s.attributed && paid.payments > 0) paid = numbers((await exec<Row>(s.attributed))[0]);
  const counted = numbers(events[0]);
  const firstSeen = numbers(first[0]);
  if (s.exactVisitors) {
    const estimate = counted.visitors_estimate ?? 0;
    counted.visitors = estimate <= ESTIMATE_EXACT_BELOW
      ? numbers((await exec<Row>(s.exactVisitors))[0]).visitors ?? 0
      : shownEstimate(estimate, firstSeen.new_visitors ?? 0);
    counted.all_visitors = counted.visitors;
  }
  const parts = { ...counted, ...numbers(goals[0]), ...numbers(sessions[0]), ...firstSeen, ...paid };
  return { data: figures(parts, OVERVIEW_FIELDS), meta: { range: rangeMeta(q) } };
};
