//! `board.html`: one self-contained file. Inline CSS, JS and SVG; a
//! Content-Security-Policy that allows no network fetch at all. Every piece
//! of text from a record (model replies, server messages, names) goes
//! through [`esc`]; the script reads only numbers and keys from `data-`
//! attributes and writes only numbers and fixed words.

use std::fmt::Write;

use std::collections::BTreeMap;

use crate::Extras;
use crate::model::{Admission, Board, Cell, Id};
use crate::sections::{self, Table};

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Every character escaped is ASCII, so the text between them is copied
    // as whole slices (a char-by-char copy was 3% of the board's time).
    let mut from = 0;
    for (at, b) in s.bytes().enumerate() {
        let with = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[from..at]);
        out.push_str(with);
        from = at + 1;
    }
    out.push_str(&s[from..]);
    out
}

fn fmt_standing(s: f64) -> String {
    if s.fract() == 0.0 { format!("{s:.0}") } else { format!("{s:.1}") }
}

const CSS: &str = r#"
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1b1b1b;background:#fafafa}
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}
.wrap{overflow:auto;max-height:calc(100vh - 2rem);margin:.4rem 0}
table{border-collapse:separate;border-spacing:0;font-size:.85rem;border:solid #d5d5d5;border-width:1px 0 0 1px}
th,td{border:solid #d5d5d5;border-width:0 1px 1px 0;padding:.35rem .5rem;vertical-align:top;background:#fff}
thead th{position:sticky;top:0;background:#f0f0f0;z-index:2}
#scores tbody th.rowhead{position:sticky;left:0;z-index:1}
#scores thead th:first-child{left:0;z-index:3}
#scores td{min-width:11rem;max-width:18rem}
.standing{font-size:1.25rem;font-weight:700}
.na .standing{color:#888;font-size:1rem}
.raw{margin:.15rem 0}details summary{color:#666;font-size:.72rem;cursor:pointer}.cfg,.rec,.sub,.missing,.why,.spread{color:#666;font-size:.72rem;overflow-wrap:anywhere}
.cfg{font-size:.68rem;line-height:1.25;margin:.2rem 0;padding-top:.15rem;border-top:1px dotted #ddd}
.blend{font-weight:700;color:#0b5}
th.rowhead{cursor:pointer;text-align:left;min-width:12rem}
th.rowhead.picked{background:#dff3e6}
#scores tbody th,#scores tbody td{scroll-margin-top:var(--head,9rem)}#scores th.col,#scores td{scroll-margin-left:var(--side,12rem)}#scores th.rowhead:target{outline:2px solid #0b5;outline-offset:-2px}
.prio{display:inline-block;min-width:1.2rem;font-weight:700;color:#0b5}
.judged{font-size:.7rem;background:#ffe9b3;padding:0 .3rem;border-radius:.2rem}
.marks{font-size:.7rem;color:#345}
td.partial{background:repeating-linear-gradient(135deg,#fff,#fff 6px,#f4efe2 6px,#f4efe2 12px)}
.partial{font-size:.7rem;color:#8a5a00;font-weight:600}
.differs{font-size:.68rem;color:#7a3e9d;font-weight:400;word-break:break-word}
td.reference,th.reference{background:#f6f8fb;font-style:italic}
.gate{font-size:.7rem;font-weight:700}.gate.failed{color:#a30}
.unadmitted{opacity:.45}
.incapable .standing{color:#a30}
#removed button{margin:0 .3rem .3rem 0}
button.model{font-weight:700;border:none;background:none;cursor:pointer;text-decoration:underline dotted;padding:0}
#efficiency th{cursor:pointer}
.controls{margin:.6rem 0}.left-out{color:#555;font-size:.85rem}
.box{color:#345;font-size:.68rem;overflow-wrap:anywhere}.unlike{background:#fff4d6;padding:.4rem .6rem;border-left:4px solid #c90}
.night table{table-layout:fixed;width:100%}.night td{overflow-wrap:anywhere}.night summary{cursor:pointer;margin:.4rem 0}
.night th:nth-child(1){width:9%}.night th:nth-child(2){width:8%}.night th:nth-child(3){width:14%}.night th:nth-child(4){width:17%}.night th:nth-child(5){width:22%}.night th:nth-child(6){width:16%}.night th:nth-child(7){width:14%}
svg text{font-size:11px;font-family:system-ui,sans-serif}
"#;

const JS: &str = r#"
(function(){
  var table=document.getElementById('scores');
  if(!table)return;
  var sel=document.getElementById('weighting');
  var picks=[],hidden={};
  var optin=document.getElementById('include-unadmitted');
  // The label stays; only the list of removed models under it is rebuilt.
  var removedBox=document.getElementById('removed');
  var removed=document.getElementById('removed-list');
  var eff=document.getElementById('efficiency'),effout=document.getElementById('efficiency-removed');
  var presets={
    linear:function(k){var w=[];for(var i=0;i<k;i++)w.push(k-i);return w;},
    steep:function(k){var w=[];for(var i=0;i<k;i++)w.push(Math.pow(2,k-1-i));return w;},
    equal:function(k){var w=[];for(var i=0;i<k;i++)w.push(1);return w;}
  };
  var heads=Array.prototype.slice.call(table.tHead.rows[0].querySelectorAll('th.col'));
  var cols=heads.map(function(th){return th.getAttribute('data-col');});
  function cell(tr,col){
    var tds=tr.querySelectorAll('td');
    for(var i=0;i<tds.length;i++)if(tds[i].getAttribute('data-col')===col)return tds[i];
    return null;
  }
  function head(col){for(var i=0;i<heads.length;i++)if(heads[i].getAttribute('data-col')===col)return heads[i];return null;}
  // A row heading or cell scrolled to (a link to it, scrollIntoView) stops
  // below the sticky column headers, whose height changes as the page
  // re-renders, and right of the sticky row headings.
  function headroom(){
    table.style.setProperty('--head',(table.tHead.offsetHeight+6)+'px');
    table.style.setProperty('--side',(table.tHead.rows[0].cells[0].offsetWidth+6)+'px');
  }
  window.addEventListener('resize',headroom);
  function apply(){
    var w=presets[sel.value](picks.length);
    var rows=table.tBodies[0].rows;
    var scored=cols.map(function(c,i){
      var sum=0,tot=0,miss=0;
      picks.forEach(function(r,j){
        var td=cell(rows[r],c);var s=td.getAttribute('data-standing');
        if(s===''){miss++;}else{sum+=w[j]*parseFloat(s);}
        tot+=w[j];
      });
      return {c:c,i:i,blend:tot?sum/tot:0,miss:miss};
    });
    var order=scored.slice();
    // A column that failed the battery sorts after every admitted one,
    // unless the reader opts in.
    function out(o){return (!optin.checked&&head(o.c).getAttribute('data-admitted')==='false')?1:0;}
    order.sort(function(a,b){return (out(a)-out(b))||(picks.length?(b.blend-a.blend):0)||(a.i-b.i);});
    var hr=table.tHead.rows[0];
    order.forEach(function(o){hr.appendChild(head(o.c));});
    for(var r=0;r<rows.length;r++){order.forEach(function(o){rows[r].appendChild(cell(rows[r],o.c));});}
    scored.forEach(function(o){
      var th=head(o.c);th.hidden=!!hidden[o.c];
      for(var r=0;r<rows.length;r++)cell(rows[r],o.c).hidden=!!hidden[o.c];
      th.querySelector('.blend').textContent=picks.length?o.blend.toFixed(2):'';
      th.querySelector('.missing').textContent=o.miss?('missing '+o.miss+' of your '+picks.length+' picks'):'';
    });
    // The removed models, listed above the table: click one to add it back.
    while(removed.firstChild)removed.removeChild(removed.firstChild);
    cols.forEach(function(c){
      if(!hidden[c])return;
      var b=document.createElement('button');b.className='restore';b.setAttribute('data-col',c);
      b.textContent=head(c).querySelector('button.model').textContent;
      b.addEventListener('click',function(){delete hidden[c];apply();});
      removed.appendChild(b);
    });
    removedBox.hidden=!removed.firstChild;
    // The efficiency readout follows the same order and leaves out the
    // same removed models, and says which.
    if(eff){
      var body=eff.tBodies[0],ers=Array.prototype.slice.call(body.rows),names=[];
      order.forEach(function(o){
        ers.forEach(function(tr){
          if(tr.getAttribute('data-col')!==o.c)return;
          tr.hidden=!!hidden[o.c];body.appendChild(tr);
          if(tr.hidden)names.push(head(o.c).querySelector('button.model').textContent);
        });
      });
      effout.lastChild.textContent=names.join(', ');
      effout.hidden=!names.length;
    }
    for(var r=0;r<rows.length;r++){
      var rh=rows[r].querySelector('th.rowhead');var k=picks.indexOf(r);
      rh.querySelector('.prio').textContent=k<0?'':String(k+1);
      if(k<0)rh.classList.remove('picked');else rh.classList.add('picked');
    }
    headroom();
  }
  Array.prototype.forEach.call(table.querySelectorAll('th.rowhead'),function(th){
    th.addEventListener('click',function(){
      var r=parseInt(th.getAttribute('data-row'),10);var k=picks.indexOf(r);
      if(k<0)picks.push(r);else picks.splice(k,1);
      apply();
    });
  });
  Array.prototype.forEach.call(table.querySelectorAll('button.model'),function(b){
    b.addEventListener('click',function(){hidden[b.getAttribute('data-col')]=true;apply();});
  });
  document.getElementById('show-all').addEventListener('click',function(){hidden={};apply();});
  sel.addEventListener('change',apply);
  optin.addEventListener('change',apply);
  apply();
  if(eff){
    var last=-1,dir=1;
    Array.prototype.forEach.call(eff.tHead.rows[0].cells,function(th,ci){
      th.addEventListener('click',function(){
        dir=(last===ci)?-dir:1;last=ci;
        var num=th.getAttribute('data-numeric')==='true';
        var body=eff.tBodies[0];var rs=Array.prototype.slice.call(body.rows);
        rs.sort(function(a,b){
          var x=a.cells[ci].getAttribute('data-sort'),y=b.cells[ci].getAttribute('data-sort');
          if(num){return dir*((parseFloat(x)||0)-(parseFloat(y)||0));}
          return dir*(x<y?-1:x>y?1:0);
        });
        rs.forEach(function(r){body.appendChild(r);});
      });
    });
  }
})();
"#;

/// A table in its own sideways-scrolling box. `keyed`: each row names its
/// board column (the first cell) in `data-col`, for the script to follow
/// the board's order.
fn table_html(out: &mut String, id: &str, t: &Table, keyed: bool) {
    if id.is_empty() {
        out.push_str("<div class=\"wrap\"><table><thead><tr>");
    } else {
        let _ = write!(out, "<div class=\"wrap\"><table id=\"{id}\"><thead><tr>");
    }
    for (h, n) in t.headings.iter().zip(&t.numeric) {
        let _ = write!(out, "<th data-numeric=\"{n}\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        match row.first() {
            Some(key) if keyed => {
                let _ = write!(out, "<tr data-col=\"{}\">", esc(key));
            }
            _ => out.push_str("<tr>"),
        }
        for cell in row {
            // Sort key: the leading number for numeric columns ("12/60" → 12).
            let key: String =
                cell.chars().filter(|c| *c != ',').take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let _ =
                write!(out, "<td data-sort=\"{}\">{}</td>", esc(if key.is_empty() { cell } else { &key }), esc(cell));
        }
        out.push_str("</tr>");
    }
    if t.rows.is_empty() {
        let _ = write!(out, "<tr><td colspan=\"{}\">nothing measured yet</td></tr>", t.headings.len());
    }
    out.push_str("</tbody></table></div>");
}

/// A horizontal bar chart.
fn bars(data: &[(String, f64)], unit: &str) -> String {
    if data.is_empty() {
        return "<p>nothing measured yet</p>".into();
    }
    let max = data.iter().map(|d| d.1).fold(0.0_f64, f64::max).max(1e-9);
    let (label_w, bar_w, row_h) = (260.0, 360.0, 22.0);
    let h = row_h * data.len() as f64 + 10.0;
    let mut s = format!(
        "<svg role=\"img\" width=\"{}\" height=\"{h}\" viewBox=\"0 0 {} {h}\">",
        label_w + bar_w + 90.0,
        label_w + bar_w + 90.0
    );
    for (i, (label, v)) in data.iter().enumerate() {
        let y = 5.0 + row_h * i as f64;
        let w = bar_w * v / max;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{label_w}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"#3a7\"/><text x=\"{:.1}\" y=\"{}\">{v:.2} {}</text>",
            label_w - 6.0,
            y + 14.0,
            fitted(label, LABEL_CHARS),
            row_h - 6.0,
            label_w + w + 4.0,
            y + 14.0,
            esc(unit)
        );
    }
    s.push_str("</svg>");
    s
}

/// How many characters of a column's name fit left of a bar (260 px at the
/// board's 11 px chart font), and in a line chart's legend before its key.
const LABEL_CHARS: usize = 38;
const LEGEND_CHARS: usize = 44;

/// A chart label that never runs past its space: a name longer than `max`
/// characters is cut with an ellipsis, and the whole name is its title
/// (shown on hover and read by screen readers).
fn fitted(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        return esc(label);
    }
    let cut: String = label.chars().take(max.saturating_sub(1)).collect();
    format!("<title>{}</title>{}…", esc(label), esc(cut.trim_end()))
}

/// Throughput against concurrency: per-request (solid) and aggregate
/// (dashed) lines per configuration.
fn lines(series: &[crate::sections::Series]) -> String {
    if series.is_empty() {
        return "<p>nothing measured yet</p>".into();
    }
    let (w, h, pad) = (560.0, 260.0, 40.0);
    let max_x = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).fold(1.0_f64, f64::max);
    let max_y = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.1.max(q.2))).fold(1e-9_f64, f64::max);
    let x = |v: f64| pad + (w - 2.0 * pad) * (v / max_x);
    let y = |v: f64| h - pad - (h - 2.0 * pad) * (v / max_y);
    // The legend goes under the axes, one line per configuration.
    let total_h = h + 18.0 * series.len() as f64 + 6.0;
    let mut s = format!("<svg role=\"img\" width=\"{w}\" height=\"{total_h}\" viewBox=\"0 0 {w} {total_h}\">");
    let _ = write!(
        s,
        "<line x1=\"{pad}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{}\" stroke=\"#999\"/><text x=\"{}\" y=\"{}\">concurrent requests</text><text x=\"4\" y=\"{}\">tok/s (max {max_y:.1})</text>",
        h - pad,
        w - pad,
        h - pad,
        h - pad,
        w / 2.0 - 50.0,
        h - 8.0,
        pad - 10.0
    );
    for (i, (label, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path = |f: fn(&(f64, f64, f64)) -> f64| -> String {
            pts.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(f(p)))).collect::<Vec<_>>().join(" ")
        };
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/><polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"5,4\" points=\"{}\"/>",
            path(|p| p.1),
            path(|p| p.2)
        );
        for p in pts {
            let _ = write!(s, "<text x=\"{:.1}\" y=\"{}\">{}</text>", x(p.0) - 3.0, h - pad + 14.0, p.0);
        }
        let _ = write!(
            s,
            "<text x=\"{pad}\" y=\"{}\" fill=\"{c}\">{} (solid: per request, dashed: aggregate)</text>",
            h + 18.0 * i as f64 + 8.0,
            fitted(label, LEGEND_CHARS)
        );
    }
    s.push_str("</svg>");
    s
}

const COLORS: [&str; 6] = ["#3a7", "#37a", "#a73", "#a37", "#7a3", "#73a"];

/// Sustained load: p99 TTFT (solid, left axis) and goodput (dashed, right
/// axis, 0–100%) against the offered rate, one colour per configuration.
fn load_chart(series: &[crate::sections::LoadLine]) -> String {
    if series.is_empty() {
        return "<p>nothing measured yet</p>".into();
    }
    let (w, h, pad) = (560.0, 260.0, 44.0);
    let max_x = series.iter().flat_map(|l| l.points.iter().map(|q| q.0)).fold(1e-9_f64, f64::max);
    let max_t = series.iter().flat_map(|l| l.points.iter().filter_map(|q| q.1)).fold(1e-9_f64, f64::max);
    let x = |v: f64| pad + (w - 2.0 * pad) * (v / max_x);
    let yt = |v: f64| h - pad - (h - 2.0 * pad) * (v / max_t);
    let yg = |v: f64| h - pad - (h - 2.0 * pad) * (v / 100.0);
    let total_h = h + 18.0 * series.len() as f64 + 6.0;
    let mut s = format!("<svg role=\"img\" width=\"{w}\" height=\"{total_h}\" viewBox=\"0 0 {w} {total_h}\">");
    let _ = write!(
        s,
        "<line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#999\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"#999\"/><line x1=\"{r}\" y1=\"{pad}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#ccc\"/><text x=\"{}\" y=\"{}\">offered req/s (max {max_x:.2})</text><text x=\"4\" y=\"{}\">p99 TTFT ms (max {max_t:.0})</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">goodput %</text>",
        w / 2.0 - 60.0,
        h - 8.0,
        pad - 12.0,
        w - 4.0,
        pad - 12.0,
        b = h - pad,
        r = w - pad,
    );
    for (i, line) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        // p99 TTFT on the left axis, goodput on the right; every point
        // marked, so a line of one point still shows.
        let ttft: Vec<(f64, f64)> = line.points.iter().filter_map(|p| Some((x(p.0), yt(p.1?)))).collect();
        let goodput: Vec<(f64, f64)> = line.points.iter().filter_map(|p| Some((x(p.0), yg(p.2?)))).collect();
        let joined =
            |pts: &[(f64, f64)]| pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect::<Vec<_>>().join(" ");
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/><polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"5,4\" points=\"{}\"/>",
            joined(&ttft),
            joined(&goodput)
        );
        for (a, b) in &ttft {
            let _ = write!(s, "<circle cx=\"{a:.1}\" cy=\"{b:.1}\" r=\"3\" fill=\"{c}\"/>");
        }
        for (a, b) in &goodput {
            let _ = write!(s, "<circle cx=\"{a:.1}\" cy=\"{b:.1}\" r=\"3\" fill=\"white\" stroke=\"{c}\"/>");
        }
        let _ = write!(
            s,
            "<text x=\"{pad}\" y=\"{}\" fill=\"{c}\">{} (solid: p99 TTFT, dashed: goodput)</text>",
            h + 18.0 * i as f64 + 8.0,
            fitted(&line.column, LEGEND_CHARS)
        );
    }
    s.push_str("</svg>");
    for line in series.iter().filter(|l| l.short.is_some()) {
        let _ = write!(
            s,
            "<p class=\"left-out\">{}: {}</p>",
            esc(&line.column),
            esc(line.short.as_deref().unwrap_or_default())
        );
    }
    s
}

/// Aggregate output against per-request speed, each configuration's
/// points (filled on its Pareto frontier, hollow where another of its
/// points beats them on both) and its frontier as a line.
fn frontier_chart(series: &[crate::frontier::Series]) -> String {
    if series.is_empty() {
        return "<p>nothing measured yet</p>".into();
    }
    let (w, h, pad) = (560.0, 260.0, 44.0);
    let all = || series.iter().flat_map(|s| s.points.iter());
    let max_x = all().map(|p| p.aggregate_tok_s).fold(1e-9_f64, f64::max);
    let max_y = all().map(|p| p.per_request_tok_s).fold(1e-9_f64, f64::max);
    let x = |v: f64| pad + (w - 2.0 * pad) * (v / max_x);
    let y = |v: f64| h - pad - (h - 2.0 * pad) * (v / max_y);
    let total_h = h + 18.0 * series.len() as f64 + 6.0;
    let mut s = format!("<svg role=\"img\" width=\"{w}\" height=\"{total_h}\" viewBox=\"0 0 {w} {total_h}\">");
    let _ = write!(
        s,
        "<line x1=\"{pad}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\" stroke=\"#999\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"#999\"/><text x=\"{}\" y=\"{}\">aggregate tok/s (max {max_x:.1})</text><text x=\"4\" y=\"{}\">per-request tok/s (max {max_y:.1})</text>",
        w - pad,
        w / 2.0 - 60.0,
        h - 8.0,
        pad - 12.0,
        b = h - pad,
    );
    for (i, ser) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let front: Vec<String> = ser
            .points
            .iter()
            .filter(|p| p.pareto)
            .map(|p| format!("{:.1},{:.1}", x(p.aggregate_tok_s), y(p.per_request_tok_s)))
            .collect();
        let _ = write!(s, "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>", front.join(" "));
        for p in &ser.points {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" stroke=\"{c}\" fill=\"{}\"><title>{}: {:.1} aggregate, {:.1} per request{}</title></circle>",
                x(p.aggregate_tok_s),
                y(p.per_request_tok_s),
                if p.pareto { c } else { "none" },
                esc(&p.source),
                p.aggregate_tok_s,
                p.per_request_tok_s,
                if p.pareto { ", on the frontier" } else { ", beaten on both" }
            );
        }
        let _ = write!(
            s,
            "<text x=\"{pad}\" y=\"{}\" fill=\"{c}\">{} (line: its frontier)</text>",
            h + 18.0 * i as f64 + 8.0,
            fitted(&ser.column, LEGEND_CHARS)
        );
    }
    s.push_str("</svg>");
    s
}

/// Records as links to their transcripts, where the host has them.
fn records_html(records: &[Id], transcripts: &BTreeMap<String, String>) -> String {
    records
        .iter()
        .map(|r| match transcripts.get(&**r) {
            Some(sha) => format!("<a href=\"transcripts/{sha}.json\">{}</a>", esc(r)),
            None => esc(r),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell's records, folded the same way in every kind of cell; nothing
/// when the cell has none.
fn folded_records(records: &[Id], transcripts: &BTreeMap<String, String>) -> String {
    if records.is_empty() {
        return String::new();
    }
    format!(
        "<details><summary>records</summary><div class=\"rec\">{}</div></details>",
        records_html(records, transcripts)
    )
}

/// What a cell says of its configuration, where a run is behind it and
/// its configuration differs from its column's (the head says it once).
fn config_html(column: &str, config: Option<&str>) -> String {
    config
        .and_then(|c| crate::model::cell_config(column, c))
        .map_or(String::new(), |c| format!("<div class=\"cfg\">{}</div>", esc(&c)))
}

/// An id per row heading, from its title ("Prose speed" → `row-prose-speed`),
/// so that a link can point at a row; a repeated one takes its index.
fn row_anchors(board: &Board) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    board
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let (mut slug, mut gap) = (String::from("row"), true);
            for ch in row.title.chars() {
                if !ch.is_ascii_alphanumeric() {
                    gap = true;
                    continue;
                }
                if gap {
                    slug.push('-');
                    gap = false;
                }
                slug.push(ch.to_ascii_lowercase());
            }
            if seen.insert(slug.clone()) { slug } else { format!("{slug}-{i}") }
        })
        .collect()
}

/// Render the whole page.
pub fn render(board: &Board, runs: &crate::run::Runs, extras: &Extras) -> String {
    let mut out = String::new();
    page_head(&mut out, board, extras);
    let anchors = row_anchors(board);
    scores(&mut out, board, runs, extras, &anchors);
    references_html(&mut out, board);
    efficiency(&mut out, board, runs);
    charts(&mut out, board, runs);
    run_log(&mut out, board, runs, extras);
    files_and_campaigns(&mut out, runs, extras);
    tail(&mut out, board, runs, &anchors);
    out
}

/// The page's head, title, what a cell shows, the ordering controls, and
/// the board's kinds of hardware where it has more than one.
fn page_head(out: &mut String, board: &Board, extras: &Extras) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <title>{}</title><style>{CSS}</style></head><body><h1>{}</h1>",
        esc(&board.title),
        esc(&board.title)
    );
    if let Some(sel) = &extras.selection {
        let _ = write!(out, "<p class=\"selection\"><b>{}</b></p>", esc(&sel.sentence()));
    }
    out.push_str(
        "<p>Every cell shows a 0 to 10 standing within its row, the raw measurement and the records \
         behind it; each column's head says its configuration once, and a cell only what of its own differs. Standings compare within a row only; there are no column \
         totals. A cell without a measurement is N/A with its reason and no score.</p>\
         <p>Order the models your way: click a row heading to make it priority 1, another for priority 2, and so \
         on; the models re-sort by a weighted blend in which earlier priorities count more. The number under \
         each model is its weighted standing; a row a model was never entered in counts as zero, and its label \
         says how many of your picks it is missing. Click a numbered heading again to drop it. Click a model's \
         name to remove its column; the removed ones are listed above the table, click one to add it back. \
         The configuration battery is the gate a configuration passes before its numbers count: a column whose \
         latest battery failed is greyed, marked not admitted, and sorted after the admitted ones unless you \
         include it.</p>",
    );
    out.push_str(
        "<div class=\"controls\">Weighting: <select id=\"weighting\">\
         <option value=\"linear\">earlier picks count more (3 picks: 3, 2, 1)</option>\
         <option value=\"steep\">first pick dominates (3 picks: 4, 2, 1)</option>\
         <option value=\"equal\">all picks equal</option></select> \
         <button id=\"show-all\">Show all models</button> \
         <label><input type=\"checkbox\" id=\"include-unadmitted\"> include configurations that failed the battery in the order</label></div>\
         <div id=\"removed\" hidden>Removed (click to add back): <span id=\"removed-list\"></span></div>",
    );
    if !board.hardware_kinds.is_empty() {
        let _ = write!(
            out,
            "<p class=\"unlike\"><b>These columns were measured on {} kinds of hardware</b>: standings compare \
             like with like only within a kind, and each column names its kind and its box. {}{}</p>",
            board.hardware_kinds.len(),
            esc(&board.hardware_kinds.join("; ")),
            crate::boxes::unlike_columns(&board.columns).map_or(String::new(), |u| format!(" {}", esc(&u)))
        );
    }
}

/// The scorecard: a column head per configuration, a row per measured
/// thing, each cell its standing, raw figure and records.
fn scores(out: &mut String, board: &Board, runs: &crate::run::Runs, extras: &Extras, anchors: &[String]) {
    let transcripts: BTreeMap<String, String> = runs
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| extras.transcripts.contains(&c.transcript_sha256))
                .map(move |c| (r.record_id(c).to_string(), c.transcript_sha256.clone()))
        })
        .collect();
    // The table scrolls sideways in its own box, never the page; the box is
    // at most a screen high so that the column headers still stick.
    out.push_str("<div class=\"wrap\"><table id=\"scores\"><thead><tr><th>What is measured</th>");
    for c in &board.columns {
        let (admitted, gate) = match &c.admission {
            Admission::NotRun => (true, "<div class=\"gate\">not gated: battery not run</div>".to_string()),
            Admission::Passed { .. } => (true, "<div class=\"gate\">battery passed</div>".to_string()),
            Admission::Failed { failing, .. } => {
                (false, format!("<div class=\"gate failed\">not admitted: failed {failing} checks</div>"))
            }
        };
        let _ = write!(
            out,
            "<th class=\"col{}\" data-col=\"{k}\" data-admitted=\"{admitted}\"><button class=\"model\" data-col=\"{k}\" title=\"remove this column\">{}</button>\
             <div class=\"sub\">{}{} · {}</div><div class=\"cfg\">{}</div>{}<div class=\"marks\">{}</div>{}{gate}<div class=\"blend\"></div><div class=\"missing\"></div></th>",
            if admitted { "" } else { " unadmitted" },
            esc(&c.label),
            c.note.as_deref().map_or(String::new(), |n| format!("{} · ", esc(n))),
            esc(&c.model),
            esc(&c.engine),
            esc(&crate::model::head_config(c)),
            c.differs.as_deref().map_or(String::new(), |d| format!("<div class=\"differs\">differs: {}</div>", esc(d))),
            esc(&c.marks.join(" · ")),
            column_boxes(c),
            k = esc(&c.key),
        );
    }
    out.push_str("</tr></thead><tbody>");
    for (i, row) in board.rows.iter().enumerate() {
        let _ = write!(
            out,
            "<tr data-row=\"{i}\"><th class=\"rowhead\" id=\"{}\" data-row=\"{i}\" title=\"{}\"><span class=\"prio\"></span>{}{}</th>",
            anchors[i],
            esc(&row.rule),
            esc(&row.title),
            if row.judged { " <span class=\"judged\">judged, not measured</span>" } else { "" }
        );
        for c in &board.columns {
            cell_html(out, row, c, &transcripts);
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

/// One cell of the scorecard: its standing, raw figure, spread, what a
/// later run said, what of its configuration differs, and its records.
fn cell_html(
    out: &mut String,
    row: &crate::model::Row,
    c: &crate::model::Column,
    transcripts: &BTreeMap<String, String>,
) {
    let cell = &row.cells[&c.key];
    let grey = if matches!(c.admission, Admission::Failed { .. }) { " unadmitted" } else { "" };
    match cell {
        Cell::Measured { standing, raw, config, records, spread, partial, failed_later, .. } => {
            let spread = spread
                .as_ref()
                .map(|s| format!("<div class=\"spread\">{}{}</div>", esc(&s.words()), unseparated(row, &c.key)))
                .unwrap_or_default();
            let later = if failed_later.is_empty() {
                String::new()
            } else {
                format!(
                    "<div class=\"partial\">a later run failed and does not replace this one: {}</div>",
                    esc(&failed_later.join("; "))
                )
            };
            let _ = write!(
                out,
                "<td class=\"{grey}{}\" data-col=\"{}\" data-standing=\"{standing}\" title=\"{}\"><div class=\"standing\">{}</div><div class=\"raw\">{}</div>{spread}{}{later}{}{}</td>",
                if partial.is_some() { " partial" } else { "" },
                esc(&c.key),
                esc(config),
                fmt_standing(*standing),
                esc(raw),
                partial.as_deref().map_or(String::new(), |p| format!("<div class=\"partial\">{}</div>", esc(p))),
                config_html(&c.config, Some(config)),
                folded_records(records, transcripts)
            );
        }
        Cell::Judged { standing, raw, reason } => {
            let _ = write!(
                out,
                "<td class=\"{grey}\" data-col=\"{}\" data-standing=\"{standing}\" title=\"{}\"><div class=\"standing\">{}</div><div class=\"raw\">{}</div><div class=\"why\">judged: {}</div></td>",
                esc(&c.key),
                esc(reason),
                fmt_standing(*standing),
                esc(raw),
                esc(reason)
            );
        }
        Cell::NotApplicable { reason, config, records } => {
            let _ = write!(
                out,
                "<td class=\"na{grey}\" data-col=\"{}\" data-standing=\"\" title=\"{}\"><div class=\"standing\">N/A</div><div class=\"why\">{}</div>{}{}</td>",
                esc(&c.key),
                esc(reason),
                esc(reason),
                config_html(&c.config, config.as_deref()),
                folded_records(records, transcripts)
            );
        }
        Cell::Incapable { reason, config, records } => {
            let _ = write!(
                out,
                "<td class=\"incapable{grey}\" data-col=\"{}\" data-standing=\"0\" title=\"{}\"><div class=\"standing\">0</div><div class=\"why\">{}</div>{}{}</td>",
                esc(&c.key),
                esc(reason),
                esc(reason),
                config_html(&c.config, config.as_deref()),
                folded_records(records, transcripts)
            );
        }
    }
}

/// The A-Bench efficiency readout: what a correct answer costs.
fn efficiency(out: &mut String, board: &Board, runs: &crate::run::Runs) {
    let efficiency = sections::efficiency(runs);
    let _ = write!(
        out,
        "<h2>Efficiency readout</h2><p>How much time and output a correct A-Bench answer costs; feeds no score. \
         It covers {} of the {} columns. Its models follow the board's order: your priorities and weighting \
         above re-sort them, and a model removed above is left out here too. Click a column heading to sort by \
         it alone, again to reverse; changing the priorities above sorts by them again. A high lost count \
         flatters speed and tokens: the server only answered what it reached.</p>",
        efficiency.rows.len(),
        board.columns.len()
    );
    table_html(out, "efficiency", &efficiency, true);
    let left_out = sections::efficiency_left_out(board, runs);
    if !left_out.is_empty() {
        let list: Vec<String> = left_out.iter().map(|(k, why)| format!("{} ({why})", esc(k))).collect();
        let _ = write!(out, "<p class=\"left-out\">Not in this readout: {}.</p>", list.join(", "));
    }
    out.push_str(
        "<p class=\"left-out\" id=\"efficiency-removed\" hidden>Removed above, so left out here: <span></span></p>",
    );
}

/// Decode bars, throughput against concurrency, sustained load, the
/// frontier and the tokens-per-second table.
fn charts(out: &mut String, board: &Board, runs: &crate::run::Runs) {
    out.push_str("<h2>Decode speed by configuration</h2>");
    out.push_str(&bars(&sections::decode_bars(board), "tok/s"));
    out.push_str("<h2>Throughput against concurrency</h2>");
    out.push_str(&lines(&sections::concurrency_lines(runs)));
    out.push_str("<h2>Sustained load</h2><p>p99 time to first token and goodput (the share of requests that met the suite's objectives) against the offered rate, from each configuration's sweep; a rate the client itself could not hold is left out.</p>");
    out.push_str(&load_chart(&sections::load_lines(board, runs)));
    out.push_str("<h2>Aggregate against per-request speed</h2><p>Every concurrency level and sustained-load rate (of every mix) a configuration was measured at: more users (aggregate tok/s) against more speed each (per-request tok/s). Filled points are its Pareto frontier (nothing of it beats them on both), joined by its line.</p>");
    out.push_str(&frontier_chart(&board.frontier));
    out.push_str("<h2>Tokens per second, by tested combination</h2><p>Single-stream decode and aggregate output are different measurements and never share a column. Decode excludes the time to first token.</p>");
    table_html(out, "tokens", &sections::tokens_per_second(runs), false);
}

/// Every run by night, the latest open.
fn run_log(out: &mut String, board: &Board, runs: &crate::run::Runs, extras: &Extras) {
    out.push_str("<h2>Every run, including the failures</h2><p>Historical failures are kept, never replaced by later passes, and a run that failed never replaces a measurement. Every file is its own row; the parts of a partitioned run and the runs that resumed one are read as one run, each case once, and their rows say so. Runs are grouped by night (a campaign, or the UTC date a run of no campaign started on), the latest night first and open, older nights folded.</p>");
    for (i, night) in sections::run_log(board, runs, &extras.folded).iter().enumerate() {
        let _ = write!(
            out,
            "<details class=\"night\"{}><summary><b>{}</b>: {}</summary>",
            if i == 0 { " open" } else { "" },
            esc(&night.label),
            esc(&night.words)
        );
        if night.table.rows.is_empty() && !night.notable.is_empty() {
            out.push_str("<p>Handed as counts; the runs that failed as runs or were resumed:</p><ul>");
            for n in &night.notable {
                let _ = write!(out, "<li>{}</li>", esc(n));
            }
            out.push_str("</ul>");
        } else if !night.table.rows.is_empty() {
            table_html(out, if i == 0 { "runs" } else { "" }, &night.table, false);
        } else {
            out.push_str("<p>Handed as counts: no run of it failed as a run or was resumed.</p>");
        }
        out.push_str("</details>");
    }
}

/// Damaged files, files read once, and the campaigns.
fn files_and_campaigns(out: &mut String, runs: &crate::run::Runs, extras: &Extras) {
    if !extras.damage.is_empty() {
        out.push_str("<h3>Damaged measurement files</h3><p>Cut by a crash or a full disk, or not measurement files at all: each record up to the damage is used where the file's manifest was readable.</p>");
        table_html(out, "damage", &sections::damage(&extras.damage), false);
    }
    if !extras.read_once.is_empty() {
        out.push_str("<h3>Files read once</h3><p>Whole files of a run that an earlier file (by name) already gave: the run is read once, from that file. An identical copy adds nothing and is not damaged.</p>");
        table_html(out, "read-once", &sections::read_once(&extras.read_once), false);
    }
    if let Some((table, missing)) = sections::campaigns(runs, &extras.folded) {
        out.push_str("<h2>Campaigns</h2><p>Each configuration of a campaign as its own record says: its launch, the memory its server gave back after the stop, and the suites not run with why.</p>");
        table_html(out, "campaigns", &table, false);
        for m in &missing {
            let _ = write!(out, "<p class=\"left-out\">{}</p>", esc(m));
        }
    }
}

/// Pinned configurations, hardware snapshots, the methodology and the
/// page's script.
fn tail(out: &mut String, board: &Board, runs: &crate::run::Runs, anchors: &[String]) {
    out.push_str("<h2>Pinned serving configurations</h2><p>As each run's manifest recorded them: a snapshot, not a live monitor.</p>");
    table_html(out, "configs", &sections::pinned_configs(runs), false);
    out.push_str("<h2>Hardware snapshots</h2><p>The state captured at the run, not current utilisation.</p>");
    table_html(out, "hardware", &sections::hardware(runs), false);
    out.push_str("<section id=\"methodology\"><h2>Methodology</h2><h3>Scoring rules</h3><ul>");
    for (row, anchor) in board.rows.iter().zip(anchors) {
        let _ = write!(out, "<li><b><a href=\"#{anchor}\">{}</a></b>: {}</li>", esc(&row.title), esc(&row.rule));
    }
    out.push_str("</ul><h3>Instruments</h3><ul>");
    for (title, description, _) in sections::methodology(runs) {
        let _ = write!(out, "<li><b>{}</b>: {}</li>", esc(&title), esc(&description));
    }
    let _ = writeln!(out, "</ul></section><script>{JS}</script></body></html>");
}

/// Under a column's name: its kind of hardware where the board has more
/// than one, and every box it was measured on, one a line; marked as the
/// board's head is where its own boxes are unlike.
fn column_boxes(c: &crate::model::Column) -> String {
    let kind = match (&c.hardware, c.unlike) {
        (Some(k), true) => format!("<b>hardware {}: rows from unlike boxes</b> · ", esc(k)),
        (Some(k), false) => format!("<b>hardware {}</b> · ", esc(k)),
        (None, _) => String::new(),
    };
    let on = if c.boxes.is_empty() {
        esc(&c.measured_on)
    } else {
        c.boxes.iter().map(|b| esc(b)).collect::<Vec<_>>().join("<br>+ ")
    };
    format!("<div class=\"box{}\">{kind}measured on {on}</div>", if c.unlike { " unlike" } else { "" })
}

/// The mark of a leading column its interval cannot tell from the best.
pub fn unseparated(row: &crate::model::Row, key: &str) -> &'static str {
    if row.not_separated.iter().any(|k| k == key) { " · ≈ not separated from the leader" } else { "" }
}

/// Published figures read elsewhere: their own table after the scorecard,
/// with source and date, no standing and no place in any order.
fn references_html(out: &mut String, board: &Board) {
    if board.references.is_empty() {
        return;
    }
    out.push_str(
        "<h2 id=\"references\">Published references (read elsewhere, not measured here)</h2><p>Figures as their \
         sources published them, for comparison. They are not measurements of this box: never scored, never in \
         a sort, never mixed into a measured cell.</p><div class=\"wrap\"><table id=\"references-table\"><thead><tr><th>What is measured</th>",
    );
    for r in &board.references {
        let _ = write!(
            out,
            "<th class=\"reference\">{}<div class=\"sub\">{}{} · {}</div></th>",
            esc(&r.label),
            r.note.as_deref().map_or(String::new(), |n| format!("{} · ", esc(n))),
            esc(&r.source),
            esc(&r.date)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in
        board.rows.iter().filter(|row| board.references.iter().any(|r| r.figure.iter().any(|f| f.row == row.title)))
    {
        let _ = write!(out, "<tr><th class=\"rowhead\">{}</th>", esc(&row.title));
        for r in &board.references {
            match r.figure.iter().find(|f| f.row == row.title) {
                Some(f) => {
                    let from = match (&f.source, &f.date) {
                        (None, None) => String::new(),
                        (s, d) => format!(
                            "<div class=\"cfg\">{}</div>",
                            esc(&[s.as_deref().unwrap_or(&r.source), d.as_deref().unwrap_or(&r.date)].join(" · "))
                        ),
                    };
                    let _ = write!(out, "<td class=\"reference\"><div class=\"raw\">{}</div>{from}</td>", esc(&f.raw));
                }
                None => out.push_str("<td class=\"reference\"><div class=\"why\">not published</div></td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}
