/// The preview page: every activity as the phone would roughly show it, updating live, with a log of pushes and
/// budget decisions. Self-contained (no external scripts, fonts or images).
enum PreviewPage {
    static let html = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>LiveBridge preview</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <style>
    body { font: 15px -apple-system, system-ui, sans-serif; background: #111; color: #eee; margin: 24px; }
    h1 { font-size: 20px; } .cards { display: flex; flex-wrap: wrap; gap: 16px; }
    .card { background: #1c1c1e; border-radius: 22px; padding: 16px 18px; width: 340px; box-shadow: 0 2px 12px #0008; }
    .card.ended { opacity: .45; } .row { display: flex; justify-content: space-between; margin: 4px 0; }
    .name { color: #8e8e93; font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
    .bar { height: 8px; background: #3a3a3c; border-radius: 4px; overflow: hidden; margin: 10px 0; display: flex; }
    .bar > div { height: 100%; } .icon { font-size: 12px; color: #8e8e93; border: 1px solid #3a3a3c; border-radius: 6px; padding: 1px 6px; }
    .big { font-size: 28px; font-weight: 600; } table { border-collapse: collapse; margin-top: 24px; font-size: 12px; }
    td { padding: 2px 10px; color: #aeaeb2; }
    .red{color:#ff453a}.orange{color:#ff9f0a}.yellow{color:#ffd60a}.green{color:#30d158}.mint{color:#63e6e2}.teal{color:#40c8e0}
    .cyan{color:#64d2ff}.blue{color:#0a84ff}.indigo{color:#5e5ce6}.purple{color:#bf5af2}.pink{color:#ff375f}.brown{color:#ac8e68}
    .gray{color:#8e8e93}
    </style></head>
    <body><h1>LiveBridge preview</h1><div id="cards" class="cards"></div>
    <table id="log"></table>
    <script>
    const colors = {red:'#ff453a',orange:'#ff9f0a',yellow:'#ffd60a',green:'#30d158',mint:'#63e6e2',teal:'#40c8e0',cyan:'#64d2ff',
      blue:'#0a84ff',indigo:'#5e5ce6',purple:'#bf5af2',pink:'#ff375f',brown:'#ac8e68',gray:'#8e8e93'};
    const esc = s => String(s ?? '').replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
    function value(v) {
      if (!v) return '';
      if (v.formatter && v.value) {
        const t = new Date(v.value).getTime(), d = Math.max(0, Math.round((v.formatter === 'time_until' ? t - Date.now() : Date.now() - t) / 1000));
        return esc(Math.floor(d / 3600) + ':' + String(Math.floor(d % 3600 / 60)).padStart(2, '0') + ':' + String(d % 60).padStart(2, '0'));
      }
      return '<span class="' + esc(v.text_color) + '">' + esc(v.value) + '</span>';
    }
    function bar(p) {
      if (p == null) return '';
      if (typeof p === 'number') return '<div class="bar"><div style="width:' + p * 100 + '%;background:#0a84ff"></div></div>';
      if (p.style === 'simple') return '<div class="bar"><div style="width:' + p.value * 100 + '%;background:' + (colors[p.color] || '#0a84ff') + '"></div></div>';
      let left = p.value, html = '<div class="bar">';
      for (const s of p.segments || []) { const f = Math.max(0, Math.min(s.value, left)); left -= f;
        html += '<div style="width:' + f * 100 + '%;background:' + (colors[s.fill_color] || '#30d158') + '"></div>' +
                '<div style="width:' + (s.value - f) * 100 + '%;background:' + (s.track_fill === 'hatched' ? 'repeating-linear-gradient(45deg,#3a3a3c 0 3px,#555 3px 6px)' : (colors[s.track_color] || '#3a3a3c')) + '"></div>'; }
      return html + '</div>';
    }
    function card(key, item) {
      const p = item.payload, c = p.content || p, icon = c.icon && (c.icon.name || c.icon);
      let html = '<div class="card' + (item.ended ? ' ended' : '') + '"><div class="row"><span class="name">' + esc(key) + '</span>' + (icon ? '<span class="icon">' + esc(icon) + '</span>' : '') + '</div>';
      if (c.template === 'monitor') {
        html += '<div class="row"><div>' + esc(c.left_column?.header) + '<div class="big">' + value(c.left_column?.value) + '</div>' + esc(c.left_column?.footer) + '</div>' +
                '<div>' + esc(c.right_column?.header) + '<div class="big">' + value(c.right_column?.value) + '</div>' + esc(c.right_column?.footer) + '</div></div>';
      } else if (c.template === 'progress') {
        html += '<div class="row"><span>' + value(c.header_left) + '</span><span>' + value(c.header_right) + '</span></div>' + bar(c.progress) +
                '<div class="row"><span>' + value(c.footer_left) + '</span><span>' + value(c.footer_right) + '</span></div>';
      } else if (c.template === 'generic') {
        html += '<div class="row"><span>' + esc(c.state) + '</span><span>' + (c.remaining_time != null ? esc(Math.round(c.remaining_time / 60) + ' min') : '') + '</span></div>' + bar(c.progress);
      } else {
        html += '<div class="row"><span>' + esc(p.title || p.job_id) + '</span><span>' + esc(p.status || 'running') + '</span></div>';
        if (p.layout === 'sports') html += '<div class="row big"><span>' + esc(p.metricA) + '</span><span>' + esc(p.secondaryMetric) + '</span><span>' + esc(p.metricB) + '</span></div><div class="row"><span>' + esc(p.subA) + '</span><span>' + esc(p.subB) + '</span></div>';
        else html += '<div class="row"><span class="big">' + esc(p.metric) + '</span><span>' + esc(p.secondaryMetric) + '</span></div>' + bar(p.progress) + '<div>' + esc(p.message) + '</div>';
      }
      return html + '</div>';
    }
    async function refresh() {
      try {
        const state = await (await fetch('/api/state')).json();
        document.getElementById('cards').innerHTML = Object.keys(state.activities).sort().map(k => card(k, state.activities[k])).join('');
        document.getElementById('log').innerHTML = state.log.slice(-40).reverse().map(e =>
          '<tr><td>' + new Date(e.at * 1000).toLocaleTimeString() + '</td><td>' + esc(e.activity) + '</td><td>' + esc(e.decision) + (e.ended ? ' (end)' : '') + '</td></tr>').join('');
      } catch (e) {}
    }
    refresh(); setInterval(refresh, 1000);
    </script></body></html>
    """#
}
