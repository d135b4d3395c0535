// ctxfold viewer: reads the JSON API of `ctxfold serve` and draws what is on screen.
// Everything from a transcript is put into the page as text (textContent), never as HTML.
'use strict';

const ROW_H = 60;      // px per transcript row (fixed, so a 100,000-row list is a spacer and ~30 rows)
const LOG_H = 26;      // px per log row
const PAGE = 100;      // rows per API request
const OVERSCAN = 8;    // rows drawn beyond the visible ones
const KEEP_PAGES = 40; // pages kept in memory per list

const $ = (id) => document.getElementById(id);
const fmt = (n) => n.toLocaleString('en-US');

// An element with a class and text: the one way content reaches the page.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const url = path + (q.toString() ? '?' + q : '');
  const r = await fetch(url, { headers: { Accept: 'application/json' } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function note(text, cls) {
  const n = el('div', 'note ' + (cls || ''), text);
  $('notes').appendChild(n);
  return n;
}
function clearNotes(kind) {
  for (const n of [...$('notes').children]) if (!kind || n.classList.contains(kind)) n.remove();
}
function fail(err) { clearNotes('error'); note(String(err.message || err), 'error'); }

function when(iso) { return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }
function compact(v) { return typeof v === 'string' ? v : JSON.stringify(v); }

// ---- a paged, virtual list ------------------------------------------------------------

class VirtualList {
  // fetchPage(p) -> Promise<rows>; draw(row, index) -> element; rowH in px.
  constructor(scroller, rowH, fetchPage, draw) {
    this.sc = scroller; this.rowH = rowH; this.fetchPage = fetchPage; this.draw = draw;
    this.spacer = scroller.querySelector('.spacer');
    this.count = 0; this.pages = new Map(); this.loading = new Set(); this.shown = new Map();
    this.gen = 0; this.decorate = null;
    scroller.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(scroller);
  }
  reset(count) {
    this.gen++; this.count = count; this.pages.clear(); this.loading.clear();
    for (const e of this.shown.values()) e.remove();
    this.shown.clear();
    this.spacer.style.height = (count * this.rowH) + 'px';
    this.schedule();
  }
  redraw() { for (const e of this.shown.values()) e.remove(); this.shown.clear(); this.schedule(); }
  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }
  row(i) { const p = this.pages.get(Math.floor(i / PAGE)); return p ? p[i % PAGE] : undefined; }
  scrollTo(i) { this.sc.scrollTop = Math.max(0, i * this.rowH - this.rowH); this.schedule(); }
  async load(p) {
    if (this.pages.has(p) || this.loading.has(p)) return;
    const gen = this.gen;
    this.loading.add(p);
    try {
      const rows = await this.fetchPage(p);
      if (gen !== this.gen) return;
      this.pages.set(p, rows);
      if (this.pages.size > KEEP_PAGES) this.pages.delete(this.pages.keys().next().value);
      for (const [i, e] of this.shown) if (Math.floor(i / PAGE) === p) { e.remove(); this.shown.delete(i); }
      this.schedule();
    } catch (err) { if (gen === this.gen) fail(err); } finally { if (gen === this.gen) this.loading.delete(p); }
  }
  render() {
    if (this.sc.hidden || !this.count) return; // a hidden list asks for nothing
    const top = this.sc.scrollTop, h = this.sc.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / this.rowH) - OVERSCAN);
    const last = Math.min(this.count, Math.ceil((top + h) / this.rowH) + OVERSCAN);
    for (const [i, e] of this.shown) if (i < first || i >= last) { e.remove(); this.shown.delete(i); }
    for (let i = first; i < last; i++) {
      if (this.shown.has(i)) continue;
      const data = this.row(i);
      if (data === undefined) this.load(Math.floor(i / PAGE));
      const e = data === undefined ? el('div', 'row loading', 'loading…') : this.draw(data, i);
      e.style.top = (i * this.rowH) + 'px';
      e.style.height = this.rowH + 'px';
      e.dataset.index = i;
      this.sc.appendChild(e);
      this.shown.set(i, e);
    }
    if (this.decorate) this.decorate(first, last);
  }
}

// ---- state ------------------------------------------------------------------------------

const state = { ctx: null, seq: null, encoding: 'cl100k_base', window: null, diff: null, ctxOffset: 0, query: '' };

function preview(m) {
  const bits = [];
  if (m.text) bits.push(m.text);
  for (const p of m.parts) {
    if (p.type === 'tool_use') bits.push('→ ' + p.name + '(' + compact(p.arguments ?? p.input ?? {}) + ')');
    else if (p.type === 'tool_result') bits.push('← ' + compact(p.content));
    else if (p.type === 'tool') bits.push('tool ' + p.name);
    else if (!['text', 'thinking'].includes(p.type)) bits.push('[' + p.type + ']');
  }
  for (const c of m.tool_calls || []) bits.push('→ ' + c.name + '(' + compact(c.arguments ?? {}) + ')');
  if (!bits.length) bits.push(m.parts.some((p) => p.type === 'thinking') ? '(thinking only)' : '(no content)');
  return bits.join('  ').replace(/\s+/g, ' ').slice(0, 400);
}

function tokenBar(tokens) {
  const bar = el('span', 'bar');
  const fill = el('span', 'fill');
  // Log scale, full at 8,192 tokens: a 5-token reply and a 5,000-token tool result both show.
  fill.style.width = Math.min(100, 100 * Math.log2(1 + tokens) / 13).toFixed(1) + '%';
  bar.appendChild(fill);
  bar.title = fmt(tokens) + ' tokens';
  return bar;
}

function messageRow(m, i) {
  const row = el('div', 'row msg role-' + m.role);
  const meta = el('div', 'meta');
  meta.append(el('span', 'pos', m.position === null ? 'shown' : '#' + m.position), el('span', 'role', m.role));
  if (m.compaction) {
    row.classList.add('compaction');
    const b = el('button', 'badge', '≡ ' + fmt(m.compaction.messages) + ' msgs · ' + fmt(m.compaction.tokens) + ' tok');
    b.title = 'Show the originals this message stands for';
    b.addEventListener('click', (ev) => { ev.stopPropagation(); showMessage(m, true); });
    meta.append(b);
  }
  meta.append(tokenBar(m.tokens), el('span', 'tok', fmt(m.tokens) + ' tok'), el('span', 'time', when(m.created_at)));
  if (m.name) meta.append(el('span', 'dim', m.name));
  if (m.seq !== null) meta.append(el('span', 'seqn', 'seq ' + m.seq));
  row.append(meta, el('div', 'preview', preview(m)));
  row.addEventListener('click', () => showMessage(m, false));
  return row;
}

const transcript = new VirtualList($('transcript'), ROW_H, async (p) => {
  const c = state.ctx;
  const body = await api('/api/contexts/' + encodeURIComponent(c.id),
                         { seq: state.seq, offset: p * PAGE, limit: PAGE, encoding: state.encoding });
  return body.messages;
}, messageRow);

transcript.decorate = () => {
  if (!state.ctx) return;
  const atNow = state.seq === state.ctx.next_seq;
  const w = atNow && state.window && state.window.window ? state.window : null;
  const d = state.diff && state.diff.to === state.seq ? state.diff : null;
  for (const [i, e] of transcript.shown) {
    const m = transcript.row(i);
    e.classList.toggle('outside', !!w && i < w.start && !w.specials.includes(i));
    e.classList.toggle('window-start', !!w && i === w.start);
    e.classList.toggle('changed', !!d && !!m && m.position !== null && m.position >= d.unchanged);
  }
};

function eventSummary(e) {
  const d = e.data || {};
  if (d.message) {
    const where = d.op === 'insert' ? 'insert at ' + d.position : 'replace ' + d.first + '–' + d.last;
    const m = d.message;
    const text = typeof m.content === 'string' ? m.content
      : Array.isArray(m.content) ? m.content.map((p) => p.text || ('[' + p.type + ']')).join(' ') : '';
    return where + ': ' + m.role + ' ' + text.replace(/\s+/g, ' ').slice(0, 300);
  }
  if (d.op === 'remove') return 'remove ' + d.first + '–' + d.last;
  return compact(d).slice(0, 300);
}

const log = new VirtualList($('log'), LOG_H, async (p) => {
  const body = await api('/api/contexts/' + encodeURIComponent(state.ctx.id) + '/events',
                         { after: p * PAGE - 1, limit: PAGE });
  return body.events;
}, (e) => {
  const row = el('div', 'row ev type-' + e.type);
  row.append(el('span', 'pos', e.seq), el('span', 'time', when(e.time)), el('span', 'etype', e.type),
             el('span', 'preview', eventSummary(e)));
  row.addEventListener('click', () => showEvent(e));
  return row;
});

// ---- the detail pane ----------------------------------------------------------------------

function openDetail(title) {
  const body = $('detail-body');
  body.replaceChildren(el('h2', null, title));
  $('detail').hidden = false;
  return body;
}
$('detail-close').addEventListener('click', () => { $('detail').hidden = true; });

function partBlock(p) {
  const box = el('div', 'part part-' + p.type);
  if (p.type === 'text') box.append(el('pre', 'text', p.text));
  else if (p.type === 'thinking') box.append(el('div', 'label', 'thinking'), el('pre', 'text thinking', p.text));
  else if (p.type === 'tool_use') {
    box.append(el('div', 'label', '→ call ' + p.name + '  ' + (p.call_id || p.id || '')),
               el('pre', 'text', JSON.stringify(p.arguments ?? p.input ?? {}, null, 2)));
  } else if (p.type === 'tool_result') {
    box.append(el('div', 'label', '← result ' + (p.call_id || '')), el('pre', 'text', compact(p.content)));
  } else {
    const src = p.source && typeof p.source === 'object' && typeof p.source.url === 'string' ? p.source.url : '';
    box.append(el('div', 'label', '[' + p.type + '] ' + src), el('pre', 'text dim', JSON.stringify(p, null, 2)));
  }
  return box;
}

function messageBlock(m, nested) {
  const box = el('div', 'message role-' + m.role);
  const head = el('div', 'meta');
  head.append(el('span', 'pos', m.position === null ? 'shown' : '#' + m.position), el('span', 'role', m.role),
              el('span', 'time', when(m.created_at)), tokenBar(m.tokens), el('span', 'tok', fmt(m.tokens) + ' tok'));
  if (m.seq !== null) head.append(el('span', 'seqn', 'seq ' + m.seq));
  if (m.tool_call_id) head.append(el('span', 'dim', 'answers ' + m.tool_call_id));
  box.append(head);
  if (typeof m.content === 'string') box.append(el('pre', 'text', m.content));
  else for (const p of m.parts) box.append(partBlock(p));
  for (const c of m.tool_calls || []) {
    box.append(el('div', 'label', '→ call ' + c.name + '  ' + c.id), el('pre', 'text', JSON.stringify(c.arguments ?? {}, null, 2)));
  }
  if (m.metadata && Object.keys(m.metadata).length) box.append(el('pre', 'text dim', 'metadata ' + JSON.stringify(m.metadata)));
  if (m.compaction) {
    const c = m.compaction;
    const btn = el('button', 'badge', '≡ stands for ' + fmt(c.messages) + ' messages · ' + fmt(c.tokens) + ' tok — show the originals');
    const holder = el('div', 'originals');
    btn.addEventListener('click', () => toggleOriginals(m, holder, btn));
    box.append(btn, holder);
    if (nested) toggleOriginals(m, holder, btn);
  }
  return box;
}

async function toggleOriginals(m, holder, btn) {
  if (holder.childElementCount) { holder.replaceChildren(); btn.classList.remove('open'); return; }
  btn.classList.add('open');
  try {
    const id = encodeURIComponent(state.ctx.id);
    const ev = (await api('/api/contexts/' + id + '/events', { after: m.compaction.seq - 1, limit: 1 })).events[0];
    const first = ev.data.first, n = ev.data.last - ev.data.first + 1;
    holder.append(el('div', 'dim', 'Before seq ' + m.compaction.seq + ', positions ' + first + '–' + ev.data.last + ':'));
    for (let off = first; off < first + n; off += 1000) {
      const body = await api('/api/contexts/' + id, { seq: m.compaction.seq, offset: off, limit: Math.min(1000, first + n - off),
                                                      encoding: state.encoding });
      for (const o of body.messages) holder.append(messageBlock(o, false));
    }
    if (ev.data.compaction) holder.append(el('pre', 'text dim', 'compaction ' + JSON.stringify(ev.data.compaction)));
  } catch (err) { fail(err); }
}

function showMessage(m, expand) {
  const body = openDetail(m.position === null ? 'Shown message' : 'Message #' + m.position);
  body.append(messageBlock(m, expand));
}

function showEvent(e) {
  const body = openDetail('Event ' + e.seq + ' · ' + e.type);
  body.append(el('div', 'dim', when(e.time)), el('pre', 'text', JSON.stringify(e.data, null, 2)));
}

// ---- the context ---------------------------------------------------------------------------

function statsLine(t) {
  const at = t.seq === t.next_seq ? 'now' : 'at seq ' + fmt(t.seq) + ' of ' + fmt(t.next_seq);
  return fmt(t.message_count) + ' messages · ' + fmt(t.total_tokens) + ' tokens (' + state.encoding + ') · ' +
    fmt(t.next_seq) + ' events · ' + at;
}

async function loadTranscript(known) {
  const c = state.ctx;
  const head = known || await api('/api/contexts/' + encodeURIComponent(c.id),
                                   { seq: state.seq, limit: 0, encoding: state.encoding });
  c.next_seq = head.next_seq;
  $('seq').max = head.next_seq;
  $('seq').value = state.seq;
  $('seq-out').textContent = state.seq === head.next_seq ? 'now (' + head.next_seq + ')' : String(state.seq);
  $('context-stats').textContent = statsLine(head);
  transcript.reset(head.message_count);
}

async function openContext(id) {
  try {
    const head = await api('/api/contexts/' + encodeURIComponent(id), { limit: 0, encoding: state.encoding });
    state.ctx = { id, next_seq: head.next_seq };
    state.seq = head.next_seq; state.window = null; state.diff = null;
    clearNotes();
    $('empty').hidden = true; $('context').hidden = false; $('detail').hidden = true;
    $('context-title').textContent = id;
    $('budget').value = ''; $('diff-from').value = ''; $('diff-to').value = '';
    for (const li of $('contexts').children) li.classList.toggle('on', li.dataset.id === id);
    if (location.hash.slice(1) !== encodeURIComponent(id)) history.replaceState(null, '', '#' + encodeURIComponent(id));
    await loadTranscript(head);
    log.reset(head.next_seq);
    transcript.sc.scrollTop = 0; log.sc.scrollTop = 0;
  } catch (err) { fail(err); }
}

async function setSeq(seq) {
  state.seq = seq;
  try { await loadTranscript(); } catch (err) { fail(err); }
}

let seqTimer = 0;
$('seq').addEventListener('input', () => {
  const v = Number($('seq').value);
  $('seq-out').textContent = v === state.ctx.next_seq ? 'now (' + v + ')' : String(v);
  clearTimeout(seqTimer);
  seqTimer = setTimeout(() => setSeq(v), 150);
});
$('seq-now').addEventListener('click', () => setSeq(state.ctx.next_seq));
$('encoding').addEventListener('change', async () => {
  state.encoding = $('encoding').value;
  await setSeq(state.seq);
  if (state.window) applyWindow();
});

async function applyWindow() {
  clearNotes('window');
  const raw = $('budget').value.trim();
  if (raw === '') { state.window = null; transcript.redraw(); return; }
  try {
    const w = await api('/api/contexts/' + encodeURIComponent(state.ctx.id) + '/window',
                        { budget: raw, encoding: state.encoding });
    state.window = w;
    if (state.seq !== state.ctx.next_seq) await setSeq(state.ctx.next_seq);
    const n = note(w.window
      ? 'A window of ' + fmt(w.budget) + ' tokens keeps ' + fmt(w.kept) + ' of ' + fmt(w.message_count) +
        ' messages (' + fmt(w.tokens) + ' tokens), from row ' + fmt(w.start) + '. '
      : 'The whole transcript fits ' + fmt(w.budget) + ' tokens (' + fmt(w.tokens) + '). ', 'window');
    if (w.window) {
      const j = el('button', 'link', 'jump there');
      j.addEventListener('click', () => transcript.scrollTo(w.start));
      n.append(j);
    }
    transcript.redraw();
  } catch (err) { fail(err); }
}
$('budget').addEventListener('change', applyWindow);

async function applyDiff() {
  clearNotes('diff');
  const from = $('diff-from').value.trim(), to = $('diff-to').value.trim();
  if (from === '') { state.diff = null; transcript.redraw(); return; }
  try {
    const d = await api('/api/contexts/' + encodeURIComponent(state.ctx.id) + '/diff', { from, to });
    state.diff = d;
    await setSeq(d.to);
    const n = note('From seq ' + fmt(d.from) + ' (' + fmt(d.from_count) + ' messages) to seq ' + fmt(d.to) + ' (' +
      fmt(d.to_count) + ' messages): the first ' + fmt(d.unchanged) + ' are unchanged; ' +
      fmt(d.from_count - d.unchanged) + ' were replaced or removed, ' + fmt(d.to_count - d.unchanged) +
      ' are new or changed (marked). ', 'diff');
    const j = el('button', 'link', 'first change');
    j.addEventListener('click', () => transcript.scrollTo(d.unchanged));
    const b = el('button', 'link', 'show seq ' + d.from);
    b.addEventListener('click', () => setSeq(d.from));
    n.append(j, b);
  } catch (err) { fail(err); }
}
$('diff-go').addEventListener('click', applyDiff);

for (const b of $('tabs').querySelectorAll('button')) {
  b.addEventListener('click', () => {
    for (const o of $('tabs').querySelectorAll('button')) o.classList.toggle('on', o === b);
    $('transcript').hidden = b.dataset.tab !== 'transcript';
    $('log').hidden = b.dataset.tab !== 'log';
    (b.dataset.tab === 'log' ? log : transcript).schedule();
  });
}

// ---- the contexts ---------------------------------------------------------------------------

async function listContexts(append) {
  try {
    if (!append) state.ctxOffset = 0;
    const body = await api('/api/contexts', { q: state.query, limit: 50, offset: state.ctxOffset });
    if (!append) $('contexts').replaceChildren();
    for (const c of body.contexts) {
      const li = el('li', c.id === (state.ctx && state.ctx.id) ? 'on' : '');
      li.dataset.id = c.id;
      li.append(el('div', 'cid', c.id),
                el('div', 'dim', (c.agent_name ? c.agent_name + ' · ' : '') + fmt(c.message_count) + ' messages · ' +
                   fmt(c.next_seq) + ' events'),
                el('div', 'dim', 'updated ' + when(c.updated_at)));
      li.addEventListener('click', () => openContext(c.id));
      $('contexts').append(li);
    }
    state.ctxOffset += body.contexts.length;
    $('context-count').textContent = fmt(body.total) + (state.query ? ' matching' : '') + ' context' + (body.total === 1 ? '' : 's');
    $('more-contexts').hidden = state.ctxOffset >= body.total;
    return body;
  } catch (err) { fail(err); return null; }
}

let searchTimer = 0;
$('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => { state.query = $('search').value.trim(); listContexts(false); }, 200);
});
$('more-contexts').addEventListener('click', () => listContexts(true));

window.addEventListener('hashchange', () => {
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted && (!state.ctx || state.ctx.id !== wanted)) openContext(wanted);
});

(async function start() {
  const body = await listContexts(false);
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted) await openContext(wanted);
  else if (body && body.total === 1) await openContext(body.contexts[0].id);
})();
