/*
 * The public share board: fetches /share/<slug>/data for the chosen period and draws the headline
 * figures, the visitors chart and every section the board publishes. Sections the board does not
 * publish are not in the data and are never drawn.
 */
(function () {
  'use strict';
  var C = window.TallyCharts;
  var el = C.el;
  var slug = document.body.getAttribute('data-slug');
  var app = document.getElementById('app');
  // The period of the board on screen, once one is drawn.
  var shown = null;

  var PERIODS = [
    ['today', 'Today', 1], ['yesterday', 'Yesterday', 2], ['last24h', 'Last 24 hours', 1], ['last7d', 'Last 7 days', 7],
    ['last30d', 'Last 30 days', 30], ['month', 'This month', 31], ['last12m', 'Last 12 months', 366], ['year', 'This year', 366],
  ];

  var TITLES = {
    geo: 'Countries', tech: 'Devices & browsers', goals: 'Goals', pages: 'Pages', funnel: 'Funnels', heatmap: 'When visitors come',
    revenue: 'Revenue', sources: 'Sources', ai_panel: 'AI crawlers & assistants', keywords: 'Search keywords',
    channel_quality: 'Channel quality', imported_history: 'History',
  };

  function rows(list, field, format) {
    return (list || []).map(function (r) {
      var v = Number(r[field || 'visitors'] || 0);
      return { label: String(r.label === '' ? '(none)' : r.label), value: v, display: format ? format(v) : undefined };
    });
  }

  function block(title, content) {
    return el('div', { class: 'block' }, [el('h3', { text: title }), content]);
  }

  var DRAW = {
    geo: function (s) { return [block('Countries', C.barList(rows(s.countries)))]; },
    tech: function (s) { return [block('Browsers', C.barList(rows(s.browsers))), block('Operating systems', C.barList(rows(s.os))), block('Devices', C.barList(rows(s.devices)))]; },
    goals: function (s) { return [block('Completions', C.barList(rows(s.goals, 'goals')))]; },
    pages: function (s) { return [block('Top pages', C.barList(rows(s.pages))), block('Entry pages', C.barList(rows(s.entry_pages)))]; },
    funnel: function (s) { return s.funnels.length ? s.funnels.map(C.funnel) : [C.empty('No funnels are defined for this site.')]; },
    heatmap: function (s) { return [C.heatmap(s.cells || [])]; },
    revenue: function (s, d) {
      var money = function (v) { return C.formatMoney(v, s.currency); };
      return [
        el('div', { class: 'figures' }, [
          figure('revenue_cents', 'Revenue', money(s.revenue_cents)), figure('payments', 'Payments', C.formatNumber(s.payments)),
          figure('revenue_per_visitor_cents', 'Per visitor', money(s.revenue_per_visitor_cents)),
        ]),
        block('Revenue by channel', C.barList(rows(s.by_channel, 'revenue_cents', money))),
      ];
    },
    sources: function (s) { return [block('Channels', C.barList(rows(s.channels))), block('Referrers', C.barList(rows(s.referrers))), block('Campaigns', C.barList(rows(s.campaigns)))]; },
    ai_panel: function (s) {
      return [
        el('div', { class: 'figures' }, [figure('crawler_views', 'AI crawler page views', C.formatNumber(s.crawler_views))]),
        C.series(s.series.map(function (r) { return { label: r.bucket, value: Number(r.crawler_views || 0) }; }), { style: 'bar', height: 80, title: 'AI crawler views' }),
        block('AI crawlers', C.barList(rows(s.crawlers, 'views'))),
        block('Visits from AI assistants', C.barList(rows(s.assistants))),
      ];
    },
    keywords: function (s) {
      if (!s.available) return [C.empty(s.message)];
      return [block('Search keywords (clicks)', C.barList(rows(s.terms, 'clicks')))];
    },
    channel_quality: function (s) {
      if (!s.channels.length) return [C.empty('No data for this period.')];
      var head = ['Channel', 'Visitors', 'Bounce', 'Median session', 'Conversion'];
      var money = s.channels.some(function (c) { return c.revenue_per_visitor_cents !== undefined; });
      if (money) head.push('Revenue / visitor');
      return [el('div', { class: 'table-wrap' }, [el('table', { class: 'quality' }, [
        el('thead', {}, [el('tr', {}, head.map(function (h) { return el('th', { text: h }); }))]),
        el('tbody', {}, s.channels.map(function (c) {
          var cells = [c.channel, C.formatNumber(c.visitors), C.formatNumber(c.bounce_rate) + '%', C.formatDuration(c.median_session_seconds), C.formatNumber(c.conversion_rate) + '%'];
          if (money) cells.push(C.formatNumber((c.revenue_per_visitor_cents || 0) / 100));
          return el('tr', { 'data-channel': c.channel }, cells.map(function (v) { return el('td', { text: v }); }));
        })),
      ])])];
    },
    imported_history: function (s) {
      return [C.series(s.series.map(function (r) { return { label: r.bucket, value: Number(r.visitors || 0) }; }), { style: 'bar', height: 100, title: 'Visitors over the board history' })];
    },
  };

  function figure(key, label, text) {
    return el('div', { class: 'figure', 'data-figure': key }, [el('span', { class: 'figure-value', text: text }), el('span', { class: 'figure-label', text: label })]);
  }

  function header(d, period) {
    var select = el('select', { id: 'period', 'aria-label': 'Period' }, PERIODS.filter(function (p) { return p[2] <= d.max_range_days; }).map(function (p) {
      var o = el('option', { value: p[0], text: p[1] });
      if (p[0] === period) o.selected = true;
      return o;
    }));
    select.addEventListener('change', function () { load(select.value); });
    return el('header', { class: 'board-header' }, [
      el('div', {}, [el('h1', { text: d.label }), el('p', { class: 'site', text: d.site.domain })]),
      select,
    ]);
  }

  function defaultPeriod(maxDays) {
    return maxDays >= 30 ? 'last30d' : maxDays >= 7 ? 'last7d' : 'today';
  }

  function render(d, period) {
    var s = d.summary;
    var figures = el('div', { class: 'figures summary' }, [
      figure('visitors', 'Visitors', C.formatNumber(s.visitors)), figure('views', 'Page views', C.formatNumber(s.views)),
      figure('sessions', 'Sessions', C.formatNumber(s.sessions)), figure('bounce_rate', 'Bounce rate', C.formatNumber(s.bounce_rate) + '%'),
      figure('avg_session_seconds', 'Avg. session', C.formatDuration(s.avg_session_seconds)),
    ]);
    var chart = C.series(d.timeseries.map(function (r) { return { label: r.bucket, value: Number(r.visitors || 0) }; }), { style: 'area', title: 'Visitors' });
    var sections = d.panels.map(function (name) {
      return el('section', { class: 'panel', 'data-panel': name }, [el('h2', { text: TITLES[name] || name })].concat(DRAW[name](d.sections[name], d)));
    });
    shown = period || defaultPeriod(d.max_range_days);
    app.replaceChildren(header(d, shown), figures, el('section', { class: 'panel wide', 'data-panel': 'visitors' }, [el('h2', { text: 'Visitors' }), chart]),
      el('div', { class: 'panels' }, sections), el('footer', {}, [el('span', { text: 'Range: ' + d.range.from + ' – ' + d.range.to + ' (' + d.range.tz + ')' })]));
    document.body.setAttribute('data-ready', 'true');
  }

  /**
   * A refused load (429 from a crowd behind one address, 503 overloaded, the board closed meanwhile)
   * keeps the board already drawn, period selector included, with the reason and a retry above it;
   * before anything was drawn the reason and the retry are all there is.
   */
  function refused(message, period) {
    var retry = el('button', { type: 'button', class: 'retry', text: 'Try again' });
    retry.addEventListener('click', function () { load(period); });
    var banner = el('p', { class: 'error', role: 'alert' }, [el('span', { text: message + ' ' }), retry]);
    var old = app.querySelector('p.error');
    if (old) old.remove();
    if (shown === null) {
      app.replaceChildren(banner);
    } else {
      app.insertBefore(banner, app.children[1] || null);
      // The figures on screen are still the shown period's: the selector says so again.
      document.getElementById('period').value = shown;
    }
    document.body.setAttribute('data-ready', 'error');
  }

  function load(period) {
    document.body.removeAttribute('data-ready');
    // The board is drawn in the site's own timezone (the server's default for boards).
    var qs = period ? '?period=' + encodeURIComponent(period) : '';
    fetch('/share/' + encodeURIComponent(slug) + '/data' + qs, { credentials: 'omit' })
      .catch(function () { throw new Error('The board could not be reached; check the connection.'); })
      // A proxy's own error page is not JSON: say what failed rather than the parser's words.
      .then(function (r) { return r.json().catch(function () { return {}; }).then(function (b) { return { ok: r.ok, status: r.status, body: b }; }); })
      .then(function (res) {
        if (!res.ok || !res.body.data) throw new Error((res.body.error && res.body.error.message) || 'The board could not be loaded (HTTP ' + res.status + ').');
        render(res.body.data, period);
      })
      .catch(function (err) { refused(err.message, period); });
  }

  load(null);
})();
