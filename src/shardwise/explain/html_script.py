"""The script and style of the HTML report's program graph (inline in the page, no network).

The layout is computed in the page, since expanding or collapsing a group changes the graph:
a layered (Sugiyama-style) layout per graph, nested for expanded groups.

1. Ranks: the longest path from the graph's sources (nodes come in program order, so every
   edge goes from a lower to a higher index and one pass suffices); a source is then moved
   down to just above its nearest user (constants sit next to what reads them).
2. Order within a rank: program order, then four sweeps (down, up, ...) sorting each rank by
   the barycenter of its neighbours' positions in the ranks already placed (fewer crossings).
3. Coordinates: ranks top to bottom, as tall as their tallest node; each rank centered.

An expanded group (a call, a loop, a named or manual computation) is a node as large as the
layouts of its graphs side by side; its edges end on its border. A collapsed group is a node
with a toggle. Edges that carry collectives are drawn red and labelled with kind and bytes.
A click on a node shows the explanation of its values; on a red label, the collective.
"""

from __future__ import annotations

__all__ = ["CSS", "ERRORS_JS", "GRAPH_JS"]

CSS = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
header{padding:.5em 1em;background:#f4f4f8;border-bottom:1px solid #ccc}
header h1{font-size:18px;margin:0 0 .3em 0}#summary,#cost,#axes{margin:.15em 0;font-size:14px}
#main{display:flex;gap:0;height:78vh}#view{flex:1;overflow:auto;border-right:1px solid #ccc}
#side{width:38%;overflow:auto;padding:.5em}
#detail{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;background:#f6f6f6;
padding:.5em;border:1px solid #ddd;min-height:3em}
#tools{padding:4px 1em;font-size:13px;border-bottom:1px solid #ddd}#tools button{margin-right:4px}
table{border-collapse:collapse;margin:.5em 1em}td,th{border:1px solid #ccc;padding:2px 6px;
font-size:12px;text-align:left}h2{font-size:15px;margin:.8em 1em .2em 1em}
.swatch{display:inline-block;width:1em;height:1em;vertical-align:middle;margin-right:4px;
border:1px solid #999}#legend{font-size:12px;margin:.3em 1em}#legend div{margin:1px 0}
svg text{font-size:11px;font-family:ui-monospace,monospace;pointer-events:none}
g.node{cursor:pointer}g.node rect{stroke:#666;stroke-width:.7}g.node.arg rect{stroke:#2a6}
g.node.result rect{stroke:#36c}g.node.sel rect{stroke:#000;stroke-width:2.5}
g.node.group rect{stroke-width:1.6;stroke-dasharray:4 2}
rect.box{fill:#fafafa;stroke:#888;stroke-width:1}rect.sub{fill:#fff;stroke:#bbb}
.toggle{cursor:pointer}.toggle rect{fill:#ddd;stroke:#888}
path.e{fill:none;stroke:#999;stroke-width:.8}path.c{fill:none;stroke:#d22;stroke-width:2.2}
text.c{fill:#b00;font-weight:bold;pointer-events:auto;cursor:pointer}
"""

# The first script records any error of the page (its own or a later script's) on the root
# element, where a headless browser's --dump-dom shows it; a test asserts there is none.
ERRORS_JS = """
window.addEventListener('error',function(e){var r=document.documentElement;
r.dataset.jsErrors=(r.dataset.jsErrors||'')+String(e.message)+';';});
window.addEventListener('unhandledrejection',function(e){var r=document.documentElement;
r.dataset.jsErrors=(r.dataset.jsErrors||'')+String(e.reason)+';';});
"""

GRAPH_JS = r"""
'use strict';
const W=150, H=22, GX=14, GY=28, PAD=10, HEAD=22;
let D, G, N, E, V, gNodes, gEdges;
// The data is gzipped JSON in base64 (several times smaller than the JSON); the browser's own
// DecompressionStream inflates it.
async function load(){
  const text=atob(document.getElementById('data').textContent.trim());
  const bytes=new Uint8Array(text.length);
  for(let i=0;i<text.length;i++)bytes[i]=text.charCodeAt(i);
  const stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text());
}
function init(data){
  D=data; G=D.graph; N=G.nodes; E=G.edges; V=D.values;
  gNodes=G.graphs.map(function(){return [];}); gEdges=G.graphs.map(function(){return [];});
  N.forEach(function(n,i){gNodes[n[0]].push(i);});
  E.forEach(function(e,i){gEdges[e[0]].push(i);});
}
const opened=new Set();
let zoom=null, selected=null;

function esc(s){return String(s).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;')
  .replace(/"/g,'&quot;');}
function label(n){
  const nd=N[n];
  if(nd[1]!=='op'&&nd[3].length)return V[nd[3][0]][0];
  return nd[2];
}
function fit(s,w){const m=Math.floor((w-8)/6.6);return s.length>m?s.slice(0,m-1)+'\u2026':s;}
function bytes(b){
  if(b>=1<<30)return (b/(1<<30)).toFixed(1)+' GiB';
  if(b>=1<<20)return (b/(1<<20)).toFixed(1)+' MiB';
  if(b>=1<<10)return (b/(1<<10)).toFixed(1)+' KiB';
  return b+' B';
}

// The layered layout of graph `g` drawn at instance path `path` (see the module doc).
function layout(g,path){
  const ns=gNodes[g], m=ns.length, local=new Map();
  ns.forEach(function(n,i){local.set(n,i);});
  const items=ns.map(function(n){
    const k=path+'/'+n, ch=N[n][4], it={n:n,k:k,w:W,h:H,subs:null,x:0,y:0};
    if(ch.length&&opened.has(k)){
      let x=PAD, h=0;
      it.subs=ch.map(function(c){
        const L=layout(c,k+':'+c), s={g:c,x:x,y:HEAD+16,L:L};
        x+=L.w+PAD; h=Math.max(h,L.h); return s;});
      it.w=Math.max(W,x); it.h=HEAD+16+h+PAD;
    }
    return it;});
  const preds=items.map(function(){return [];}), succs=items.map(function(){return [];});
  gEdges[g].forEach(function(ei){
    const s=local.get(E[ei][1]), t=local.get(E[ei][2]);
    preds[t].push(s); succs[s].push(t);});
  const rank=new Array(m).fill(0);
  for(let i=0;i<m;i++)for(const p of preds[i])if(rank[p]+1>rank[i])rank[i]=rank[p]+1;
  for(let i=m-1;i>=0;i--){
    if(preds[i].length||!succs[i].length)continue;
    let r=Infinity; for(const t of succs[i])r=Math.min(r,rank[t]);
    rank[i]=r-1;}
  let lo=0; for(let i=0;i<m;i++)lo=Math.min(lo,rank[i]);
  const layers=[];
  for(let i=0;i<m;i++){const r=rank[i]-lo;(layers[r]=layers[r]||[]).push(i);}
  for(let r=0;r<layers.length;r++)layers[r]=layers[r]||[];
  const pos=new Array(m).fill(0);
  function place(L){L.forEach(function(i,j){pos[i]=j-L.length/2;});}
  layers.forEach(place);
  function sweep(L,nb){
    const b=new Map();
    L.forEach(function(i){
      const a=nb[i]; if(!a.length){b.set(i,pos[i]);return;}
      let s=0; for(const j of a)s+=pos[j]; b.set(i,s/a.length);});
    L.sort(function(x,y){return b.get(x)-b.get(y)||x-y;}); place(L);
  }
  for(let k=0;k<4;k++){
    if(k%2===0)for(let r=1;r<layers.length;r++)sweep(layers[r],preds);
    else for(let r=layers.length-2;r>=0;r--)sweep(layers[r],succs);
  }
  let y=PAD, w=0;
  const widths=layers.map(function(L){
    let s=0; L.forEach(function(i){s+=items[i].w+GX;}); return s-GX;});
  widths.forEach(function(x){w=Math.max(w,x);});
  layers.forEach(function(L,r){
    let x=PAD+(w-widths[r])/2, h=0;
    L.forEach(function(i){items[i].x=x; items[i].y=y; x+=items[i].w+GX; h=Math.max(h,items[i].h);});
    y+=h+GY;});
  return {g:g,w:w+2*PAD,h:Math.max(y-GY+PAD,H+2*PAD),items:items,local:local};
}

function nodeSvg(it,x,y,out){
  out.count++;
  const nd=N[it.n], kind=nd[1], color=G.colors[nd[5]][1], group=nd[4].length>0;
  const cls='node '+kind+(group?' group':'')+(it.k===selected?' sel':'');
  if(it.subs){
    out.nodes.push('<g class="'+cls+'" data-n="'+it.n+'" data-k="'+esc(it.k)+'">'
      +'<rect class="box" x="'+x+'" y="'+y+'" width="'+it.w+'" height="'+it.h+'" rx="4"/>'
      +'<rect x="'+x+'" y="'+y+'" width="'+it.w+'" height="'+HEAD+'" fill="'+color+'"/>'
      +'<text x="'+(x+22)+'" y="'+(y+15)+'">'+esc(fit(label(it.n),it.w-20))+'</text></g>');
    out.nodes.push(toggle(it.k,x+3,y+4,'\u2212'));
    it.subs.forEach(function(s){
      const sx=x+s.x, sy=y+s.y;
      out.nodes.push('<rect class="sub" x="'+sx+'" y="'+(sy-14)+'" width="'+s.L.w+'" height="'
        +(s.L.h+14)+'"/><text x="'+(sx+4)+'" y="'+(sy-3)+'">'+esc(G.graphs[s.g][0])+'</text>');
      draw(s.L,sx,sy,out);});
    return;
  }
  out.nodes.push('<g class="'+cls+'" data-n="'+it.n+'" data-k="'+esc(it.k)+'"><title>'
    +esc(nd[2])+'</title><rect x="'+x+'" y="'+y+'" width="'+it.w+'" height="'+it.h+'" rx="'
    +(kind==='op'?3:10)+'" fill="'+color+'"/><text x="'+(x+(group?20:5))+'" y="'+(y+15)+'">'
    +esc(fit(label(it.n),it.w-(group?16:0)))+'</text></g>');
  if(group)out.nodes.push(toggle(it.k,x+3,y+4,'+'));
}
function toggle(k,x,y,sign){
  return '<g class="toggle" data-toggle="'+esc(k)+'"><rect x="'+x+'" y="'+y+'" width="14" '
    +'height="14" rx="2"/><text x="'+(x+3.5)+'" y="'+(y+11)+'">'+sign+'</text></g>';
}
function draw(L,ox,oy,out){
  L.items.forEach(function(it){it.ax=ox+it.x; it.ay=oy+it.y;});
  gEdges[L.g].forEach(function(ei){
    const e=E[ei], s=L.items[L.local.get(e[1])], t=L.items[L.local.get(e[2])];
    const x1=s.ax+s.w/2, y1=s.ay+s.h, x2=t.ax+t.w/2, y2=t.ay, d=Math.max(12,(y2-y1)/2);
    const c=e[3].length>0;
    out.edges.push('<path class="'+(c?'c':'e')+'" d="M'+x1+' '+y1+'C'+x1+' '+(y1+d)+' '+x2+' '
      +(y2-d)+' '+x2+' '+y2+'"/>');
    if(c){
      const text=e[3].map(function(i){const k=D.collectives[i];
        return k?k[0]+' '+bytes(k[2]):'?';}).join(', ');
      out.labels.push('<text class="c" data-c="'+e[3].join(',')+'" x="'+(x2+4)+'" y="'+(y2-4)
        +'">'+esc(text)+'</text>');
    }});
  L.items.forEach(function(it){nodeSvg(it,it.ax,it.ay,out);});
}
function render(){
  const L=layout(0,''), out={edges:[],nodes:[],labels:[],count:0};
  if(zoom===null){  // first drawn: fit the width, down to half size
    const room=document.getElementById('view').clientWidth||1000;
    zoom=Math.min(1,Math.max(0.5,(room-20)/L.w));
  }
  draw(L,0,0,out);
  const w=Math.max(L.w,200), h=Math.max(L.h,100);
  document.getElementById('view').innerHTML='<svg id="graph" xmlns="http://www.w3.org/2000/svg" '
    +'width="'+w*zoom+'" height="'+h*zoom+'" viewBox="0 0 '+w+' '+h+'">'
    +out.edges.join('')+out.nodes.join('')+out.labels.join('')+'</svg>';
  document.getElementById('shown').textContent=out.count+' nodes shown';
}

function explanation(i){
  return V[i][5].map(function(j){return D.lines[j].split('\u0001').join(D.file);}).join('\n');
}
function showNode(n,k){
  const nd=N[n];
  const text=nd[3].length?nd[3].map(explanation).join('\n\n'):nd[2]+' (no tensor result)';
  document.getElementById('detail').textContent=text;
  selected=k;
  document.querySelectorAll('g.sel').forEach(function(el){el.classList.remove('sel');});
  const el=document.querySelector('g.node[data-k="'+CSS.escape(k)+'"]');
  if(el)el.classList.add('sel');
  if(nd[3].length)history.replaceState(null,'','#value='+encodeURIComponent(V[nd[3][0]][0]));
}
function showCollectives(ids){
  document.getElementById('detail').textContent=ids.map(function(i){
    const c=D.collectives[i];
    return c[0]+' over {'+c[1].join(', ')+'}: '+c[2]+' B/device, ~'+c[3].toPrecision(3)
      +' s\n  at '+c[4]+(c[5]?' ('+c[5]+')':'')+'\n  for '+c[6];}).join('\n\n');
}
// The instance path of a node's first occurrence, opening the groups that hold it.
function reveal(n){
  const chain=[]; let g=N[n][0];
  while(G.graphs[g][2]>=0){const o=G.graphs[g][2]; chain.unshift([o,g]); g=N[o][0];}
  let path='';
  chain.forEach(function(c){const k=path+'/'+c[0]; opened.add(k); path=k+':'+c[1];});
  return path+'/'+n;
}
function fromHash(){
  const m=/^#value=(.*)$/.exec(location.hash);
  if(!m)return;
  const name=decodeURIComponent(m[1]);
  const i=V.findIndex(function(v){return v[0]===name||v[1]===name;});
  if(i<0)return;
  const n=N.findIndex(function(nd){return nd[3].indexOf(i)>=0;});
  if(n<0){document.getElementById('detail').textContent=explanation(i);return;}
  const k=reveal(n); render(); showNode(n,k);
  const el=document.querySelector('g.node[data-k="'+CSS.escape(k)+'"]');
  if(el&&el.scrollIntoView)el.scrollIntoView({block:'center',inline:'center'});
}
document.getElementById('view').addEventListener('click',function(ev){
  const t=ev.target.closest('[data-toggle]');
  if(t){const k=t.dataset.toggle; if(opened.has(k))opened.delete(k); else opened.add(k);
    render(); return;}
  const c=ev.target.closest('[data-c]');
  if(c){showCollectives(c.dataset.c.split(',').map(Number)); return;}
  const g=ev.target.closest('g.node');
  if(g)showNode(Number(g.dataset.n),g.dataset.k);
});
function setAll(open){
  opened.clear();
  if(open){
    const walk=function(g,path){gNodes[g].forEach(function(n){
      if(!N[n][4].length)return; const k=path+'/'+n; opened.add(k);
      N[n][4].forEach(function(c){if(k.split('/').length<12)walk(c,k+':'+c);});});};
    walk(0,'');
  }
  render();
}
document.getElementById('expand').onclick=function(){setAll(true);};
document.getElementById('collapse').onclick=function(){setAll(false);};
document.getElementById('zin').onclick=function(){zoom*=1.25;render();};
document.getElementById('zout').onclick=function(){zoom/=1.25;render();};
load().then(function(data){
  init(data);
  window.addEventListener('hashchange',fromHash);
  render();
  fromHash();
  document.body.dataset.ready='1';
});
"""
