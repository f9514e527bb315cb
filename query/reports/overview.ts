import { lowerOverview, OVERVIEW_FIELDS } from '../lower/overview';
import { figures, numbers, rangeMeta, type ReportRunner, type Row } from './shared';

export const runOverview: ReportRunner = async (q, exec) => {
  const s = lowerOverview(q);
  const none = Promise.resolve([] as Row[]);
  const [events, goals, sessions, first, payments] = await Promise.all([
    exec<Row>(s.events), s.goals ? exec<Row>(s.goals) : none, exec<Row>(s.sessions), exec<Row>(s.firstSeen), exec<Row>(s.payments),
  ]);
  let paid = numbers(payments[0]);
  // Attribution joins sessions; skip it when the window has no payment at all.
  if (s.attributed && paid.payments > 0) paid = numbers((await exec<Row>(s.attributed))[0]);
  const parts = { ...numbers(events[0]), ...numbers(goals[0]), ...numbers(sessions[0]), ...numbers(first[0]), ...paid };
  return { data: figures(parts, OVERVIEW_FIELDS), meta: { range: rangeMeta(q) } };
};
