(function(root){
  var holder = root.querySelector('script.drill-data');
  if (!holder) return;
  var D = JSON.parse(holder.textContent);
  var view = root.querySelector('.drill-view'), list = root.querySelector('.drill-list');
  var filter = root.querySelector('.drill-filter'), count = root.querySelector('.drill-count');
  var select = root.querySelector('select.metric-select');
  var shown = [], current = -1, MAX_LIST = 300;
  var position = {};
  D.queries.forEach(function(q, i){ position[q] = i; });
  function el(tag, cls, text){
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function labelsOf(i){
    var out = {};
    (D.labels[i] || []).forEach(function(x){
      var prev = out[x[0]];
      if (!prev || x[1] > prev.grade) out[x[0]] = {grade: x[1], group: x[2]};
    });
    return out;
  }
  function badge(lab){
    if (!lab) return el('span', 'badge unjudged', 'unjudged');
    var rel = lab.grade >= D.level;
    return el('span', 'badge ' + (rel ? 'rel' : 'nonrel'), 'grade ' + lab.grade);
  }
  function metricName(){ return select ? select.value : D.metrics[0]; }
  // --- span labels: chunk texts with their evidence highlighted (offsets are code points)
  var SPAN = !!(D.spans && D.place && D.grade), cache = {};
  // control characters (but tab and line breaks), bidi controls, line separators
  var BIDI = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2028\u2029\u2066-\u2069]/;
  function piecesOf(d){
    if (!cache[d]) cache[d] = ((D.pieces || {})[d] || []).map(function(p){ return [p[0], Array.from(p[1])]; });
    return cache[d];
  }
  function text(parent, chars){  // as text; those characters shown as their code, never obeyed
    var buf = '';
    chars.forEach(function(ch){
      if (!BIDI.test(ch)) { buf += ch; return; }
      if (buf) parent.appendChild(document.createTextNode(buf));
      buf = '';
      var hex = ch.codePointAt(0).toString(16).toUpperCase();
      parent.appendChild(el('span', 'ctl', 'U+' + ('0000' + hex).slice(-4)));
    });
    if (buf) parent.appendChild(document.createTextNode(buf));
  }
  function marked(parent, chars, base, lo, hi, marks){  // chars[k] stands at base + k
    var cur = lo;
    marks.forEach(function(m){
      var s = Math.max(m[0], cur), e = Math.min(m[1], hi);
      if (s >= e) return;
      if (s > cur) text(parent, chars.slice(cur - base, s - base));
      var mk = el('mark', 'ev');
      text(mk, chars.slice(s - base, e - base));
      parent.appendChild(mk);
      cur = e;
    });
    if (cur < hi) text(parent, chars.slice(cur - base, hi - base));
  }
  function gap(parent, n){ parent.appendChild(el('span', 'gap', ' … ' + n.toLocaleString('en') + ' characters … ')); }
  function docText(parent, d, a, b, marks){  // document d over [a, b), from its pieces
    var cur = a;
    piecesOf(d).forEach(function(p){
      var s = Math.max(p[0], cur), e = Math.min(p[0] + p[1].length, b);
      if (s >= e) return;
      if (s > cur) gap(parent, s - cur);
      marked(parent, p[1], p[0], s, e, marks);
      cur = e;
    });
    if (cur < b) gap(parent, b - cur);
  }
  function evidenceIn(i, d){  // the query's evidence (grade >= level) in document d, merged
    var out = [];
    (D.spans[i] || []).filter(function(s){ return s[0] === d && s[3] >= D.level; })
      .sort(function(x, y){ return x[1] - y[1]; })
      .forEach(function(s){
        var last = out[out.length - 1];
        if (last && s[1] <= last[1]) last[1] = Math.max(last[1], s[2]); else out.push([s[1], s[2]]);
      });
    return out;
  }
  var HOW = [null, 'found by its text', 'moved: its offsets disagreed with its text',
             'no place in its document: finds no evidence'];
  function chunkItem(run, i, r){
    var d = D.top[run][i][r], pl = ((D.place[run] || [])[i] || [])[r] || [-1, -1, -1, 3];
    var g = ((D.grade[run] || [])[i] || [])[r];
    var li = el('li', g === null || g === undefined ? 'unjudged' : (g >= D.level ? 'rel' : 'nonrel'));
    var line = el('div', 'drill-line');
    line.appendChild(el('span', 'rank', '#' + (r + 1)));
    line.appendChild(el('span', 'doc', D.docs[d]));
    line.appendChild(g === null || g === undefined ? el('span', 'badge unjudged', 'unjudged')
      : el('span', 'badge ' + (g >= D.level ? 'rel' : 'nonrel'), 'grade ' + g));
    var placed = pl[3] !== 3;
    if (pl[0] >= 0) line.appendChild(el('span', 'where', D.docs[pl[0]] + (placed ? ' [' + pl[1] + ', ' + pl[2] + ')' : '')));
    if (HOW[pl[3]]) line.appendChild(el('span', 'badge ' + (placed ? 'moved' : 'unplaced'), HOW[pl[3]]));
    li.appendChild(line);
    var body = el('div', 'chunk');
    var own = (D.own || {})[d];
    if (placed && (D.pieces || {})[pl[0]]) docText(body, pl[0], pl[1], pl[2], evidenceIn(i, pl[0]));
    else if (own !== undefined && own !== null) {
      var chars = Array.from(String(own));
      if (placed) {
        var hi = Math.min(pl[2], pl[1] + chars.length);
        marked(body, chars, pl[1], pl[1], hi, evidenceIn(i, pl[0]));
        if (hi < pl[2]) gap(body, pl[2] - hi);
      } else text(body, chars);
    } else body.appendChild(el('span', 'gap', 'text not kept'));
    li.appendChild(body);
    return li;
  }
  function spanMissed(i){
    var spans = D.spans[i] || [], size = {}, ranks = {}, got = {};
    spans.forEach(function(s){ size[s[4]] = (size[s[4]] || 0) + 1; });
    D.runs.forEach(function(run){
      ranks[run] = {}; got[run] = {};
      (((D.first || {})[run] || [])[i] || []).forEach(function(x){
        ranks[run][x[0]] = x[1];
        if (spans[x[0]] && x[1] <= D.depth) got[run][spans[x[0]][4]] = true;
      });
    });
    var box = el('div', 'drill-missed');
    box.appendChild(el('h4', null, 'Evidence missed in the top ' + D.depth));
    var rel = spans.map(function(s, j){ return j; }).filter(function(j){ return spans[j][3] >= D.level; });
    var table = el('table'), tr = el('tr'), tbody = el('tbody'), any = false;
    ['evidence', 'grade'].forEach(function(h, k){ tr.appendChild(el('th', k ? null : 't', h)); });
    D.runs.forEach(function(run){ tr.appendChild(el('th', null, run)); });
    var thead = el('thead'); thead.appendChild(tr); table.appendChild(thead);
    rel.forEach(function(j){
      var s = spans[j];
      if (!D.runs.some(function(run){ return !got[run][s[4]]; })) return;
      any = true;
      var row = el('tr'), cell = el('td', 't');
      var head = el('div', 'drill-line');
      head.appendChild(el('span', 'where', D.docs[s[0]] + ' [' + s[1] + ', ' + s[2] + ')'));
      if (size[s[4]] > 1) head.appendChild(el('span', 'badge group', 'group ' + (s[4] + 1) + ': any one span'));
      cell.appendChild(head);
      if ((D.pieces || {})[s[0]]) { var q = el('div', 'chunk'); docText(q, s[0], s[1], s[2], []); cell.appendChild(q); }
      row.appendChild(cell);
      row.appendChild(el('td', null, s[3]));
      D.runs.forEach(function(run){
        var r = ranks[run][j];
        var txt = r ? '#' + r : (got[run][s[4]] ? 'group found' : 'not found');
        row.appendChild(el('td', r && r <= D.depth ? 'pos' : (r || got[run][s[4]] ? '' : 'neg'), txt));
      });
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    if (any) box.appendChild(table);
    else box.appendChild(el('p', 'note', rel.length ? 'Every run found every evidence span.' : 'This query has no evidence.'));
    return box;
  }
  function fmt(v){ return v === null || v === undefined ? '–' : v.toFixed(4); }
  function render(i){
    current = i;
    view.textContent = '';
    if (i < 0) { view.appendChild(el('p', 'note', 'No query matches.')); return; }
    var q = D.queries[i], labs = labelsOf(i), m = metricName();
    var head = el('div', 'drill-head');
    head.appendChild(el('h3', null, q));
    if (D.texts_q[i]) head.appendChild(el('p', 'drill-qtext', D.texts_q[i]));
    view.appendChild(head);
    var cols = el('div', 'drill-cols');
    D.runs.forEach(function(run){
      var col = el('div', 'drill-col');
      var vals = D.values[run] && D.values[run][m];
      col.appendChild(el('h4', null, run + ' · ' + m + ' ' + fmt(vals ? vals[i] : null)));
      var ol = el('ol', 'drill-hits');
      var top = (D.top[run] || [])[i] || [];
      if (SPAN) {
        var evm = D.metrics.filter(function(x){ return x.indexOf('evidence_') === 0 && x !== m; });
        if (evm.length) col.appendChild(el('p', 'note evidence-metrics', evm.map(function(x){
          return x + ' ' + fmt(D.values[run] && D.values[run][x] ? D.values[run][x][i] : null); }).join(' · ')));
      }
      if (!top.length) col.appendChild(el('p', 'note', 'nothing retrieved'));
      if (SPAN) top.forEach(function(d, r){ ol.appendChild(chunkItem(run, i, r)); });
      else top.forEach(function(d, r){
        var li = el('li');
        var lab = labs[d];
        li.className = lab ? (lab.grade >= D.level ? 'rel' : 'nonrel') : 'unjudged';
        var line = el('div', 'drill-line');
        line.appendChild(el('span', 'rank', '#' + (r + 1)));
        line.appendChild(el('span', 'doc', D.docs[d]));
        line.appendChild(badge(lab));
        if (lab && lab.group !== null && lab.group !== undefined)
          line.appendChild(el('span', 'badge group', 'group ' + (lab.group + 1)));
        li.appendChild(line);
        if (D.texts[d]) li.appendChild(el('div', 'snippet', D.texts[d]));
        ol.appendChild(li);
      });
      col.appendChild(ol);
      cols.appendChild(col);
    });
    view.appendChild(cols);
    if (SPAN) {
      view.appendChild(spanMissed(i));
      view.querySelectorAll('.chunk').forEach(function(b){  // the evidence in sight
        var mk = b.querySelector('mark.ev');
        if (mk && mk.offsetTop - b.offsetTop > b.clientHeight - 40) b.scrollTop = mk.offsetTop - b.offsetTop - 20;
      });
      selectIn(i);
      return;
    }
    // relevant documents each run missed in its top k, and where the others ranked them
    var rel = Object.keys(labs).filter(function(d){ return labs[d].grade >= D.level; });
    var ranks = {};
    D.runs.forEach(function(run){
      ranks[run] = {};
      ((D.found[run] || [])[i] || []).forEach(function(x){ ranks[run][x[0]] = x[1]; });
    });
    var missed = el('div', 'drill-missed');
    missed.appendChild(el('h4', null, 'Relevant documents missed in the top ' + D.depth));
    var any = false;
    var table = el('table');
    var tr = el('tr'); tr.appendChild(el('th', 't', 'document')); tr.appendChild(el('th', null, 'grade'));
    D.runs.forEach(function(run){ tr.appendChild(el('th', null, run)); });
    var thead = el('thead'); thead.appendChild(tr); table.appendChild(thead);
    var tbody = el('tbody');
    rel.forEach(function(d){
      var missedBy = D.runs.filter(function(run){ var r = ranks[run][d]; return !r || r > D.depth; });
      if (!missedBy.length) return;
      any = true;
      var row = el('tr');
      var cell = el('td', 't', D.docs[d]);
      if (D.texts[d]) cell.title = D.texts[d];
      row.appendChild(cell);
      row.appendChild(el('td', null, labs[d].grade));
      D.runs.forEach(function(run){
        var r = ranks[run][d];
        row.appendChild(el('td', r && r <= D.depth ? 'pos' : (r ? '' : 'neg'), r ? '#' + r : 'not retrieved'));
      });
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    if (any) missed.appendChild(table);
    else missed.appendChild(el('p', 'note', rel.length ? 'Every run found every relevant document.' : 'This query has no relevant document.'));
    view.appendChild(missed);
    selectIn(i);
  }
  function selectIn(i){
    for (var k = 0; k < list.options.length; k++) list.options[k].selected = Number(list.options[k].value) === i;
  }
  function refill(){
    var f = filter.value.trim().toLowerCase();
    shown = [];
    for (var i = 0; i < D.queries.length; i++) {
      if (!f || D.queries[i].toLowerCase().indexOf(f) >= 0 || (D.texts_q[i] || '').toLowerCase().indexOf(f) >= 0) shown.push(i);
    }
    list.textContent = '';
    shown.slice(0, MAX_LIST).forEach(function(i){
      var o = el('option', null, D.queries[i] + (D.texts_q[i] ? ' — ' + D.texts_q[i] : ''));
      o.value = String(i);
      list.appendChild(o);
    });
    count.textContent = shown.length + ' of ' + D.queries.length + ' queries' + (shown.length > MAX_LIST ? ' (first ' + MAX_LIST + ' listed; filter to narrow)' : '');
    render(shown.length ? (shown.indexOf(current) >= 0 ? current : shown[0]) : -1);
  }
  function step(d){
    if (!shown.length) return;
    var at = shown.indexOf(current);
    render(shown[Math.max(0, Math.min(shown.length - 1, (at < 0 ? 0 : at + d)))]);
  }
  filter.addEventListener('input', refill);
  list.addEventListener('change', function(){ render(Number(list.value)); });
  if (select) select.addEventListener('change', function(){ if (current >= 0) render(current); });
  document.addEventListener('keydown', function(e){
    var t = e.target && e.target.tagName;
    if (e.ctrlKey || e.metaKey || e.altKey || t === 'INPUT' || t === 'TEXTAREA') return;
    if (e.key === 'j') step(1); else if (e.key === 'k') step(-1);
  });
  root.querySelectorAll('[data-q]').forEach(function(td){  // table cells, chart marks
    td.classList.add('qlink');
    td.addEventListener('click', function(){
      var i = position[td.getAttribute('data-q')];
      if (i === undefined) return;
      filter.value = ''; refill(); render(i);
      var target = root.querySelector('.drill-title') || view;
      target.scrollIntoView();
    });
  });
  refill();
  root.ranklensDrill = {show: function(q){ var i = position[q]; if (i !== undefined) render(i); }, step: step};
})(document.getElementById(ROOT_ID));
