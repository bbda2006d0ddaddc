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
      if (!top.length) col.appendChild(el('p', 'note', 'nothing retrieved'));
      top.forEach(function(d, r){
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
