// Sorting (click a header) and filtering (status, condition, task) of the batch
// page's run matrix. `data-v` holds each cell's sort key; numeric columns are
// marked `data-num`. Allowed by its sha256 in the page's policy.
(function(){
var t=document.getElementById('matrix'),b=t.tBodies[0];
var fs=document.getElementById('f-status'),fc=document.getElementById('f-condition'),ft=document.getElementById('f-task');
function apply(){var s=fs.value,c=fc.value,q=ft.value.toLowerCase();
Array.prototype.forEach.call(b.rows,function(r){r.hidden=!((!s||r.dataset.status===s)&&(!c||r.dataset.condition===c)&&(!q||r.dataset.task.toLowerCase().indexOf(q)>=0));});}
fs.onchange=apply;fc.onchange=apply;ft.oninput=apply;
function num(v){var f=parseFloat(v);return isNaN(f)?-1e300:f;}
var up={};
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){th.className='sort';th.onclick=function(){
up[i]=!up[i];var numeric=th.dataset.num==='1';var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(x,y){var p=x.cells[i].dataset.v,q=y.cells[i].dataset.v;var d=numeric?num(p)-num(q):(p<q?-1:(p>q?1:0));return up[i]?d:-d;});
rows.forEach(function(r){b.appendChild(r);});};});
document.body.setAttribute('data-ready','1');
})();
