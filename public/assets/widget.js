/*
 * The widget card, made for an iframe: one headline figure and a small bar or area chart, drawn from
 * /widget/<slug>.json and refreshed every minute.
 */
(function () {
  'use strict';
  var C = window.TallyCharts;
  var el = C.el;
  var slug = document.body.getAttribute('data-slug');
  var app = document.getElementById('app');

  function render(d) {
    var points = d.series.map(function (p) { return { label: p.bucket, value: Number(p.value || 0) }; });
    var head = el('div', { class: 'card-head' }, [
      el('span', {}, [d.metric === 'online' ? el('span', { class: 'live', 'aria-hidden': 'true' }) : null, d.label]),
      el('span', { class: 'card-site', text: d.site.domain }),
    ]);
    var currency = d.revenue && d.revenue.currency;
    var shown = d.unit === 'money' ? C.formatMoney(d.value, currency) : C.formatNumber(d.value);
    var value = el('div', { class: 'card-value', 'data-figure': 'value', 'data-value': d.value, text: shown });
    var revenue = d.revenue && d.unit !== 'money'
      ? el('div', { class: 'card-revenue', 'data-figure': 'revenue_cents', 'data-value': d.revenue.revenue_cents, text: 'Revenue ' + C.formatMoney(d.revenue.revenue_cents, d.revenue.currency) })
      : null;
    var chart = C.series(points, { style: d.chart_style, height: 80, title: d.label });
    app.replaceChildren(el('div', { class: 'card card-' + d.type }, [head, value, revenue, chart]));
    document.body.setAttribute('data-ready', 'true');
  }

  var drawn = false;

  /**
   * A refresh refused for a while (429, 503, a network blip) keeps the figures drawn, marked stale, until
   * the next minute's refresh; a widget that is gone (404) or was never drawn says it is not available.
   */
  function load() {
    fetch('/widget/' + encodeURIComponent(slug) + '.json', { credentials: 'omit' })
      .then(function (r) {
        if (!r.ok) throw { gone: r.status === 404 };
        return r.json();
      })
      .then(function (b) {
        render(b.data);
        drawn = true;
        document.body.removeAttribute('data-stale');
      })
      .catch(function (err) {
        if (drawn && !(err && err.gone)) {
          document.body.setAttribute('data-stale', 'true');
          return;
        }
        drawn = false;
        app.replaceChildren(el('p', { class: 'empty', text: 'This widget is not available.' }));
        document.body.setAttribute('data-ready', 'error');
      });
  }

  load();
  setInterval(load, 60000);
})();
