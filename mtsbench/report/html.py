"""``report.html``: report.md as one self-contained page to send to a colleague.

Converts the markdown the report writes (headings, paragraphs, bullet lists, tables,
images, inline code, bold, links) into HTML; each figure is inlined as a base64 PNG, each
table sorts by a click on its header (numbers by value: '0.812 [0.75, 0.87]' sorts as
0.812). No external file, script or font is referenced. When the page has loaded, its own
script checks that every image decoded (``naturalWidth`` > 0), that sorting works and
that no script error occurred, and writes the result into ``#report-status``
(``data-status`` = ``ok`` or ``error``), which a headless browser reads (the tests do).
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

STYLE = """body{font:14px/1.45 system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0;font-size:12px}th,td{border:1px solid #ccc;padding:3px 7px;
text-align:left}th{background:#f0f0f0;cursor:pointer;user-select:none}th.asc:after{content:" \\25B2"}
th.desc:after{content:" \\25BC"}tr:nth-child(even) td{background:#fafafa}img{max-width:100%;height:auto;
border:1px solid #eee}code{background:#f4f4f4;padding:0 3px}h1,h2,h3{margin-top:1.4em}.wrap{overflow-x:auto}
details{margin:.3em 0}summary{cursor:pointer}"""

CATCH = ("window.__errors=[];"
         'window.addEventListener("error",function(e){window.__errors.push(String(e.message||e));});')

SCRIPT = r"""
function cellValue(td){var t=td.textContent.trim();var n=parseFloat(t.replace(/,/g,""));
  return (t!==""&&!isNaN(n)&&/^[-+]?[0-9.]/.test(t))?n:t.toLowerCase();}
function sortTable(table,col,desc){var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(a,b){var x=cellValue(a.cells[col]),y=cellValue(b.cells[col]);
    if(typeof x!==typeof y){x=String(x);y=String(y);}return (x<y?-1:x>y?1:0)*(desc?-1:1);});
  rows.forEach(function(r){body.appendChild(r);});
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.className=i===col?(desc?"desc":"asc"):"";});}
function makeSortable(table){Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
  th.addEventListener("click",function(){sortTable(table,i,th.className==="asc");});});}
function sortWorks(){var table=document.querySelector("table.sortable");
  if(!table||table.tBodies[0].rows.length<2)return true;
  var body=table.tBodies[0],before=Array.prototype.slice.call(body.rows),col=table.tHead.rows[0].cells.length-1;
  sortTable(table,col,true);var v=Array.prototype.map.call(body.rows,function(r){return cellValue(r.cells[col]);});
  var ok=v.every(function(x,i){return i===0||typeof x!==typeof v[i-1]||v[i-1]>=x;});
  before.forEach(function(r){body.appendChild(r);});table.tHead.rows[0].cells[col].className="";return ok;}
Array.prototype.forEach.call(document.querySelectorAll("table.sortable"),makeSortable);
window.addEventListener("load",function(){var imgs=Array.prototype.slice.call(document.images);
  var broken=imgs.filter(function(i){return !(i.complete&&i.naturalWidth>0);}).map(function(i){return i.alt;});
  var sorted=sortWorks();var el=document.getElementById("report-status");
  var ok=window.__errors.length===0&&broken.length===0&&sorted;
  el.textContent=JSON.stringify({images:imgs.length,broken:broken,errors:window.__errors,sort:sorted});
  el.setAttribute("data-status",ok?"ok":"error");});
"""


def inline(text: str) -> str:
    """Inline markdown (code, bold, links) of escaped text.

    >>> inline("a `b<c>` **d** [e](f.md)")
    'a <code>b&lt;c&gt;</code> <strong>d</strong> <a href="f.md">e</a>'
    """
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1], quote=False)}</code>")
            continue
        part = html.escape(part, quote=False)
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<!\*)\*(?!\s)(.+?)(?<!\s)\*", r"<em>\1</em>", part)
        out.append(re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', part))
    return "".join(out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(rows: list[str]) -> str:
    """A markdown table as a sortable HTML table."""
    head, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
    th = "".join(f"<th>{inline(c)}</th>" for c in head)
    trs = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body)
    return f'<div class="wrap"><table class="sortable"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table></div>'


def _image(alt: str, src: str, base: Path) -> str:
    """An image line as an <img> with the PNG inlined (base64)."""
    path = (base / src) if not Path(src).is_absolute() else Path(src)
    data = base64.b64encode(path.read_bytes()).decode("ascii") if path.is_file() else ""
    return f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></p>'


IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")


def convert(markdown: str, base: Path) -> str:
    """The HTML body of ``markdown`` (images read relative to ``base``)."""
    out, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            out.append(f"<h{len(m.group(1))}>{inline(m.group(2))}</h{len(m.group(1))}>")
            i += 1
        elif m := IMAGE.match(line.strip()):
            out.append(_image(m.group(1), m.group(2), base))
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[-:| ]+\|\s*$", lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
        elif re.match(r"^\s*[-*]\s+", line):
            j = i
            items = []
            while j < len(lines) and re.match(r"^\s*[-*]\s+", lines[j]):
                items.append(re.sub(r"^\s*[-*]\s+", "", lines[j]))
                j += 1
            out.append("<ul>" + "".join(f"<li>{inline(t)}</li>" for t in items) + "</ul>")
            i = j
        else:
            j = i
            while j < len(lines) and lines[j].strip() and not re.match(r"^(#|\||!\[|\s*[-*]\s)", lines[j].lstrip()):
                j += 1
            j = max(j, i + 1)
            out.append("<p>" + inline(" ".join(s.strip() for s in lines[i:j])) + "</p>")
            i = j
    return "\n".join(out)


def write(report_md: Path, path: Path, extra: str = "") -> Path:
    """Write ``path``: ``report_md`` as one self-contained HTML page, ``extra`` (HTML: the
    probes' rankings, ``mtsbench.report.probes.html_section``) at its end."""
    markdown = Path(report_md).read_text(encoding="utf-8")
    title = next((line[2:].strip() for line in markdown.splitlines() if line.startswith("# ")), "mtsbench report")
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style><script>{CATCH}</script></head><body>\n"
            f"{convert(markdown, Path(report_md).parent)}\n{extra}\n"
            f'<div id="report-status" hidden data-status="pending"></div><script>{SCRIPT}</script></body></html>\n')
    Path(path).write_text(page, encoding="utf-8")
    return Path(path)
