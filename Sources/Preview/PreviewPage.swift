/// The preview page: every activity drawn by the preview renderer (Lock Screen and Dynamic Island), updating live, with a log of pushes and
/// budget decisions. Self-contained (no external scripts, fonts or images). It asks for `api/state` relative to itself, so it
/// works at `/` and behind Home Assistant's ingress, which serves an add-on's page under `/api/hassio_ingress/TOKEN/`.
/// The state: `{"activities": {KEY: {"svg", "ended", "phase"?}}, "log": [{"at", "activity", "decision", "ended"?}]}`.
public enum PreviewPage {
    public static let html = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>LiveBridge preview</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <style>
    body { font: 15px -apple-system, system-ui, sans-serif; background: #111; color: #eee; margin: 12px; }
    h1 { font-size: 20px; } .cards { display: flex; flex-wrap: wrap; gap: 16px; }
    .card { border-radius: 12px; overflow: hidden; width: 100%; max-width: 400px; box-shadow: 0 2px 12px #0008; }
    .card svg { display: block; width: 100%; height: auto; }
    .card.ended { outline: 2px solid #8e8e93; } .row { display: flex; justify-content: space-between; margin: 4px 0; }
    .name { color: #8e8e93; font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
    .bar { height: 8px; background: #3a3a3c; border-radius: 4px; overflow: hidden; margin: 10px 0; display: flex; }
    .bar > div { height: 100%; } .icon { font-size: 12px; color: #8e8e93; border: 1px solid #3a3a3c; border-radius: 6px; padding: 1px 6px; }
    .phase { background: #1c1c1e; color: #aeaeb2; font-size: 12px; padding: 6px 12px; }
    .big { font-size: 28px; font-weight: 600; }
    table { border-collapse: collapse; margin-top: 24px; font-size: 12px; width: 100%; max-width: 820px; table-layout: fixed; }
    th { text-align: left; color: #eee; padding: 4px 8px; border-bottom: 1px solid #3a3a3c; font-weight: 600; }
    td { padding: 2px 8px; color: #aeaeb2; overflow-wrap: anywhere; vertical-align: top; }
    th.time { width: 5.5em; } th.activity { width: 38%; }
    .red{color:#ff453a}.orange{color:#ff9f0a}.yellow{color:#ffd60a}.green{color:#30d158}.mint{color:#63e6e2}.teal{color:#40c8e0}
    .cyan{color:#64d2ff}.blue{color:#0a84ff}.indigo{color:#5e5ce6}.purple{color:#bf5af2}.pink{color:#ff375f}.brown{color:#ac8e68}
    .gray{color:#8e8e93}
    </style></head>
    <body><h1>LiveBridge preview</h1><div id="cards" class="cards"></div>
    <table id="log"></table>
    <script>
    const esc = s => String(s ?? '').replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
    function card(key, item) {
      return '<div class="card' + (item.ended ? ' ended' : '') + '">' + item.svg
        + (item.phase ? '<div class="phase">' + esc(key) + ' · ' + esc(item.phase) + '</div>' : '') + '</div>';
    }
    async function refresh() {
      try {
        const state = await (await fetch('api/state')).json();
        document.getElementById('cards').innerHTML = Object.keys(state.activities).sort().map(k => card(k, state.activities[k])).join('');
        document.getElementById('log').innerHTML =
          '<thead><tr><th class="time">Time</th><th class="activity">Activity</th><th>Push or budget decision</th></tr></thead><tbody>'
          + state.log.slice(-40).reverse().map(e =>
          '<tr><td>' + new Date(e.at * 1000).toLocaleTimeString() + '</td><td>' + esc(e.activity) + '</td><td>' + esc(e.decision) + (e.ended ? ' (end)' : '') + '</td></tr>').join('')
          + '</tbody>';
        // For the screenshot check: whether the page fits the window's width (a phone's 390 points) unclipped.
        document.body.dataset.fits = String(document.documentElement.scrollWidth <= window.innerWidth);
      } catch (e) {}
    }
    refresh(); setInterval(refresh, 1000);
    </script></body></html>
    """#
}
