// The hookhost console: one page over the daemon's or gateway's /ui/api.
// Preact with htm (no build step) renders it; uPlot draws the latency.
// Every request goes to this page's own origin with its session cookie;
// a change (POST) also carries the session's CSRF value.
import { html, render, useState, useEffect, useRef } from './vendor/htm-preact.mjs';
import uPlot from './vendor/uPlot.esm.js';

const KEEP = 500;
let csrf = '';

async function getJSON(path) {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function postJSON(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Hookhost-CSRF': csrf },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim());
  return JSON.parse(text);
}

function Verdict({ d }) {
  return html`<span class=${`verdict v-${d}`}>${d}</span>`;
}

function time(ts) {
  return (ts || '').replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// ---- Decisions ------------------------------------------------------

function useDecisions() {
  const [items, setItems] = useState([]);
  const [live, setLive] = useState(false);
  useEffect(() => {
    const source = new EventSource('/ui/api/events');
    source.onopen = () => setLive(true);
    source.onerror = () => setLive(false);
    source.onmessage = (e) => {
      const item = JSON.parse(e.data);
      setItems((old) => [item, ...old.filter((o) => o.id !== item.id)].slice(0, KEEP));
    };
    return () => source.close();
  }, []);
  return [items, live];
}

function matches(item, f) {
  const has = (value, want) => !want || String(value ?? '').includes(want);
  return has(item.agent, f.agent) && has(item.session, f.session)
    && (!f.hook || (item.hook || '') === f.hook || (item.steps || []).some((s) => s.hook === f.hook))
    && (!f.decision || item.decision === f.decision);
}

function Decisions({ items, live }) {
  const [f, setF] = useState({ agent: '', session: '', hook: '', decision: '' });
  const [picked, setPicked] = useState(null);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const shown = items.filter((i) => matches(i, f));
  const agents = [...new Set(items.map((i) => i.agent))];
  const decisions = [...new Set(items.map((i) => i.decision))];
  const one = shown.find((i) => i.id === picked);
  return html`<section id="decisions">
    <div class="filters">
      <select id="filter-agent" onChange=${set('agent')} value=${f.agent}>
        <option value="">every agent</option>
        ${agents.map((a) => html`<option value=${a}>${a}</option>`)}
      </select>
      <input id="filter-session" placeholder="session" value=${f.session} onInput=${set('session')} />
      <input id="filter-hook" placeholder="hook" value=${f.hook} onInput=${set('hook')} />
      <select id="filter-decision" onChange=${set('decision')} value=${f.decision}>
        <option value="">every decision</option>
        ${decisions.map((d) => html`<option value=${d}>${d}</option>`)}
      </select>
      <span class="quiet" id="stream-state">${live ? 'live' : 'connecting…'} · ${shown.length} of ${items.length}</span>
    </div>
    <div class="split">
      <div class="card"><table>
        <thead><tr><th>time</th><th>agent</th><th>session</th><th>event</th><th>tool</th><th>decision</th><th>hook</th><th>reason</th></tr></thead>
        <tbody>${shown.map((i) => html`<tr class=${`decision ${i.id === picked ? 'picked' : ''}`}
            data-id=${i.id} data-hook=${i.hook || ''} data-decision=${i.decision} onClick=${() => setPicked(i.id)}>
          <td class="mono">${time(i.ts)}</td><td>${i.agent}</td><td class="mono">${i.session || ''}</td>
          <td>${i.event}${i.tried ? ' (tried)' : ''}</td><td>${i.tool || ''}</td><td><${Verdict} d=${i.decision} /></td>
          <td class="hook">${i.hook || ''}</td><td>${i.reason || ''}</td></tr>`)}
        </tbody></table>
        ${items.length === 0 ? html`<p class="quiet">No decision yet: events appear here as the agents send them.</p>` : ''}
      </div>
      <div class="card" id="detail">${one ? html`<${Detail} item=${one} />` : html`<p class="quiet">Click a decision to see each hook's answer.</p>`}</div>
    </div>
  </section>`;
}

function Steps({ steps }) {
  return html`<table class="steps"><thead><tr><th>hook</th><th>stage</th><th>answer</th><th>ms</th></tr></thead>
    <tbody>${(steps || []).map((s) => html`<tr><td>${s.hook}</td><td>${s.stage}</td>
      <td><${Verdict} d=${s.outcome} />${s.called ? '' : ' (not called)'}</td><td>${s.ms.toFixed(2)}</td></tr>`)}</tbody></table>`;
}

function Detail({ item }) {
  const caller = item.caller ? `${item.caller.tenant}/${item.caller.user}` : '';
  return html`<h3><${Verdict} d=${item.decision} /> ${item.event} ${item.tool || ''}</h3>
    <p>${item.hook ? html`decided by <b>${item.hook}</b>` : 'no hook decided'}${item.reason ? `: ${item.reason}` : ''}</p>
    ${item.failed_open && item.failed_open.length ? html`<p class="error">failed open: ${item.failed_open.join(', ')}</p>` : ''}
    <p class="quiet">${item.agent} · session ${item.session || '-'} ${caller ? `· ${caller}` : ''} · ${time(item.ts)}</p>
    <h4>Input</h4><pre>${item.input}</pre>
    <h4>The chain</h4><${Steps} steps=${item.steps} />`;
}

// ---- Hooks ----------------------------------------------------------

function stateClass(state) {
  if (state.startsWith('untrusted')) return 'state-untrusted';
  if (state.startsWith('down')) return 'state-down';
  if (state.startsWith('breaker')) return 'state-breaker';
  return '';
}

function LatencyChart({ latency }) {
  const box = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    const hooks = Object.keys(latency.hooks || {});
    const xs = [...new Set(hooks.flatMap((h) => latency.hooks[h].map((b) => b[0])))].sort((a, b) => a - b);
    const series = hooks.map((h) => {
      const at = new Map(latency.hooks[h].map((b) => [b[0], b[3]]));
      return xs.map((x) => (at.has(x) ? at.get(x) : null));
    });
    const data = [xs, ...series];
    const palette = ['#3056d3', '#c4320a', '#067647', '#b54708', '#6941c6', '#0e7090'];
    if (plot.current && plot.current.series.length === hooks.length + 1) {
      plot.current.setData(data);
      return;
    }
    if (plot.current) plot.current.destroy();
    const opts = {
      width: Math.max(320, box.current.clientWidth - 8), height: 220,
      // The last ten minutes, however few buckets there are yet.
      scales: { x: { time: true, range: () => { const now = Date.now() / 1000; return [now - 600, now + 10]; } } },
      axes: [{}, { label: 'p99 ms' }],
      series: [{}, ...hooks.map((h, i) => ({ label: h, stroke: palette[i % palette.length], width: 2, spanGaps: true }))],
    };
    plot.current = new uPlot(opts, data, box.current);
  }, [latency]);
  useEffect(() => () => plot.current && plot.current.destroy(), []);
  return html`<div class="chart" id="latency-chart" ref=${box}></div>`;
}

function Hooks() {
  const [hooks, setHooks] = useState([]);
  const [latency, setLatency] = useState({ hooks: {} });
  const [error, setError] = useState('');
  useEffect(() => {
    let stop = false;
    const load = async () => {
      try {
        const [h, l] = await Promise.all([getJSON('/ui/api/hooks'), getJSON('/ui/api/latency')]);
        if (!stop) { setHooks(h.hooks); setLatency(l); setError(''); }
      } catch (e) { if (!stop) setError(e.message); }
    };
    load();
    const timer = setInterval(load, 3000);
    return () => { stop = true; clearInterval(timer); };
  }, []);
  return html`<section id="hooks">
    ${error ? html`<p class="error">${error}</p>` : ''}
    <div class="card"><h3>Latency, p99 per 10 s, last 10 minutes</h3><${LatencyChart} latency=${latency} /></div>
    <div class="card"><table>
      <thead><tr><th>hook</th><th>kind</th><th>source</th><th>state</th><th>calls</th><th>errors</th><th>p50 ms</th><th>p99 ms</th></tr></thead>
      <tbody>${hooks.map((h) => html`<tr data-hook=${h.hook}>
        <td>${h.hook}</td><td>${h.kind}${h.dialect ? ` (${h.dialect})` : ''}</td><td class="mono">${h.source}</td>
        <td class=${stateClass(h.state)}>${h.state}</td><td>${h.stats.calls}</td><td>${h.stats.errors}</td>
        <td>${(h.stats.p50_us / 1000).toFixed(2)}</td><td>${(h.stats.p99_us / 1000).toFixed(2)}</td></tr>`)}
      </tbody></table></div>
  </section>`;
}

// ---- Trust ----------------------------------------------------------

function Trust() {
  const [list, setList] = useState({ hooks: [], may_approve: false });
  const [note, setNote] = useState('');
  const load = () => getJSON('/ui/api/trust').then(setList, (e) => setNote(e.message));
  useEffect(() => { load(); }, []);
  const change = async (verb, h) => {
    try {
      await postJSON('/ui/api/trust', { [verb]: h.fingerprint });
      setNote(`${verb === 'approve' ? 'approved' : 'revoked'} ${h.hook}`);
    } catch (e) { setNote(e.message); }
    load();
  };
  return html`<section id="trust"><div class="card">
    <p class="quiet">Hooks a project's files name run only once you approve their command here or with <code>hookhost trust approve</code>.
      A changed command needs approving again.</p>
    ${note ? html`<p id="trust-note">${note}</p>` : ''}
    ${list.hooks.length === 0 ? html`<p class="quiet">No hook comes from a project's files.</p>` : ''}
    <table><thead><tr><th>state</th><th>hook</th><th>file</th><th>event</th><th>command</th><th>fingerprint</th><th></th></tr></thead>
      <tbody>${list.hooks.map((h) => html`<tr data-fingerprint=${h.fingerprint}>
        <td class=${h.trusted ? '' : 'state-untrusted'}>${h.trusted ? 'trusted' : 'untrusted'}</td>
        <td>${h.hook}</td><td class="mono">${h.file}</td><td>${h.event}${h.matcher ? ` (${h.matcher})` : ''}</td>
        <td><pre>${h.command}</pre></td><td class="mono">${(h.fingerprint || '').slice(0, 12)}</td>
        <td>${list.may_approve ? (h.trusted
          ? html`<button class="act quiet" onClick=${() => change('revoke', h)}>Revoke</button>`
          : html`<button class="act approve" onClick=${() => change('approve', h)}>Approve</button>`) : ''}</td></tr>`)}
      </tbody></table></div></section>`;
}

// ---- Try an event ---------------------------------------------------

const SAMPLE = JSON.stringify({
  session_id: 'tried-1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'PreToolUse',
  tool_name: 'Bash', tool_input: { command: 'rm -rf /' },
}, null, 2);

function Try() {
  const [dialect, setDialect] = useState('claude-code');
  const [text, setText] = useState(SAMPLE);
  const [out, setOut] = useState(null);
  const [error, setError] = useState('');
  const send = async () => {
    setError('');
    try { setOut(await postJSON('/ui/api/try', { dialect, event: text })); } catch (e) { setOut(null); setError(e.message); }
  };
  const dialects = ['claude-code', 'codex', 'gemini-cli', 'cursor', 'copilot', 'docker-agent'];
  return html`<section id="try"><div class="split">
    <div class="card">
      <p class="quiet">Paste an event as the agent sends it to its hook. The chain answers it as <code>hookhost relay</code> would; no tool runs.</p>
      <select id="try-dialect" value=${dialect} onChange=${(e) => setDialect(e.target.value)}>
        ${dialects.map((d) => html`<option value=${d}>${d}</option>`)}</select>
      <textarea id="try-event" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
      <button class="act" id="try-send" onClick=${send}>Answer it</button>
      ${error ? html`<p class="error">${error}</p>` : ''}
    </div>
    <div class="card" id="try-result">${out ? html`
      <h3><${Verdict} d=${out.record.decision} /> ${out.record.hook ? `by ${out.record.hook}` : ''}</h3>
      <h4>As relay answers (exit code, stdout, stderr)</h4>
      <pre id="try-relay">${JSON.stringify(out.relay, null, 2)}</pre>
      <h4>As the agent's HTTP hook gets it</h4><pre>${JSON.stringify(out.http, null, 2)}</pre>
      <h4>The chain</h4><${Steps} steps=${out.steps} />` : html`<p class="quiet">The answer appears here.</p>`}
    </div></div></section>`;
}

// ---- Audit ----------------------------------------------------------

function Audit() {
  const [q, setQ] = useState({ session: '', hook: '', decision: '', since: '1h' });
  const [rows, setRows] = useState(null);
  const [error, setError] = useState('');
  const set = (k) => (e) => setQ({ ...q, [k]: e.target.value });
  const search = async () => {
    setError('');
    const qs = new URLSearchParams(Object.entries(q).filter(([, v]) => v)).toString();
    try { setRows((await getJSON(`/ui/api/audit?${qs}`)).records); } catch (e) { setRows(null); setError(e.message); }
  };
  return html`<section id="audit"><div class="card">
    <div class="filters">
      <input id="audit-session" placeholder="session" value=${q.session} onInput=${set('session')} />
      <input id="audit-hook" placeholder="hook" value=${q.hook} onInput=${set('hook')} />
      <input id="audit-decision" placeholder="decision (deny, allow, …)" value=${q.decision} onInput=${set('decision')} />
      <input id="audit-since" placeholder="since (1h, 2026-11-27T10:00)" value=${q.since} onInput=${set('since')} />
      <button class="act" id="audit-search" onClick=${search}>Search</button>
    </div>
    ${error ? html`<p class="error">${error}</p>` : ''}
    ${rows ? html`<p class="quiet">${rows.length} records</p><table>
      <thead><tr><th>time</th><th>kind</th><th>hook</th><th>outcome</th><th>session</th><th>reason</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr class="audit-row"><td class="mono">${time(r.ts)}</td><td>${r.kind || 'call'}</td>
        <td>${r.hook || ''}</td><td><${Verdict} d=${r.outcome || r.decision || ''} /></td><td class="mono">${r.session || ''}</td>
        <td>${r.reason || r.error || ''}</td></tr>`)}</tbody></table>` : ''}
  </div></section>`;
}

// ---- The page -------------------------------------------------------

const TABS = { decisions: 'Decisions', hooks: 'Hooks', trust: 'Trust', try: 'Try an event', audit: 'Audit' };

function App() {
  const [session, setSession] = useState(null);
  const [tab, setTab] = useState(location.hash.slice(1) in TABS ? location.hash.slice(1) : 'decisions');
  const [items, live] = useDecisions();
  useEffect(() => {
    getJSON('/ui/api/session').then((s) => { csrf = s.csrf; setSession(s); });
  }, []);
  const go = (t) => { location.hash = t; setTab(t); };
  const who = session && session.caller ? ` · ${session.caller.tenant}/${session.caller.user}` : '';
  return html`<header>
      <h1>hookhost</h1>
      <nav>${Object.entries(TABS).map(([k, v]) => html`<button id=${`tab-${k}`} class=${tab === k ? 'on' : ''} onClick=${() => go(k)}>${v}</button>`)}</nav>
      <span class="meta">${session ? `${session.version} · ${session.config}${who}` : ''}</span>
      <form method="post" action="/ui/logout"><button class="act quiet" type="submit">Sign out</button></form>
    </header>
    ${tab === 'decisions' ? html`<${Decisions} items=${items} live=${live} />` : ''}
    ${tab === 'hooks' ? html`<${Hooks} />` : ''}
    ${tab === 'trust' ? html`<${Trust} />` : ''}
    ${tab === 'try' ? html`<${Try} />` : ''}
    ${tab === 'audit' ? html`<${Audit} />` : ''}`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
