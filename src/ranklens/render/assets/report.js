(function(root){
  function key(td){
    var v = td.getAttribute('data-v');
    if (v !== null && v !== '') { var f = parseFloat(v); if (!isNaN(f)) return f; }
    return td.textContent.toLowerCase();
  }
  root.querySelectorAll('table.sortable').forEach(function(table){
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function(th, col){
      th.addEventListener('click', function(){
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(heads, function(h){ h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function(a, b){
          var x = key(a.cells[col]), y = key(b.cells[col]);
          if (typeof x !== typeof y) { x = String(x); y = String(y); }
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function(r){ body.appendChild(r); });
      });
    });
  });
  var select = root.querySelector('select.metric-select');
  function show(metric){
    root.querySelectorAll('[data-metric]').forEach(function(el){
      el.classList.toggle('hidden', el.getAttribute('data-metric') !== metric);
    });
  }
  if (select) {
    select.addEventListener('change', function(){ show(select.value); });
    show(select.value);
  }
})(document.getElementById(ROOT_ID));
