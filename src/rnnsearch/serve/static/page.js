// The rnnsearch page: POST /translate with return_attention (searched with a beam, or sampled:
// n-best draws at a temperature), then draw the n-best list and the attention matrix alpha_ij
// (one row per output token and </s>, one column per source token).
"use strict";
const $ = (id) => document.getElementById(id);
const THRESHOLD = 0.2;  // a word counts as attending to another when alpha_ij >= this (or is its maximum)

async function loadInfo() {
  try {
    const health = await (await fetch("/health")).json();
    const c = health.config || {};
    $("model-info").textContent = `${health.model} · ${c.arch || ""} ${c.src_lang || ""}→${c.tgt_lang || ""}` +
      ` · ${health.parameters.toLocaleString()} parameters`;
    if (c.beam) { $("beam").value = c.beam; $("nbest-count").value = Math.min(5, c.beam); }
    $("beam").max = health.settings.max_beam;
  } catch (err) {
    $("model-info").textContent = "model information unavailable";
  }
}

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

async function translate(event) {
  event.preventDefault();
  const text = $("source").value;
  if (!text.trim()) { setStatus("Type a sentence first.", true); return; }
  const sampled = $("sample").checked;
  const beam = parseInt($("beam").value, 10) || 1;
  const count = parseInt($("nbest-count").value, 10) || 1;
  const request = {text: text, n_best: sampled ? count : Math.min(count, beam), return_attention: true};
  if (sampled) request.sample = {temperature: parseFloat($("temperature").value) || 1};
  else request.beam = beam;
  setStatus("translating…", false);
  $("submit").disabled = true;
  try {
    const response = await fetch("/translate", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(request),
    });
    const body = await response.json();
    if (!response.ok) { setStatus(`${response.status}: ${body.error}`, true); return; }
    show(body.translations[0]);
    setStatus(body.sample ? `done (${request.n_best} sampled at temperature ${body.sample.temperature})`
                          : `done (beam ${body.beam})`, false);
  } catch (err) {
    setStatus(`request failed: ${err}`, true);
  } finally {
    $("submit").disabled = false;
  }
}

function show(t) {
  $("result").hidden = false;
  $("translation").textContent = t.text;
  const list = $("nbest");
  list.replaceChildren();
  for (const h of t.nbest) {
    const li = document.createElement("li");
    li.textContent = h.text;
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = h.score.toFixed(3);
    li.appendChild(score);
    list.appendChild(li);
  }
  $("no-attention").hidden = t.attention !== null;
  drawHeatmap(t.attention ? t : null);
}

function drawHeatmap(t) {
  const table = $("heatmap");
  table.replaceChildren();
  if (!t) return;
  const outTokens = t.tokens.concat(["</s>"]);
  const head = table.insertRow();
  head.appendChild(document.createElement("th"));
  t.source_tokens.forEach((tok, j) => {
    const th = document.createElement("th");
    th.className = "src"; th.dataset.col = j; th.textContent = tok;
    th.addEventListener("mouseenter", () => highlightSource(t, j));
    th.addEventListener("mouseleave", clearHighlight);
    head.appendChild(th);
  });
  outTokens.forEach((tok, i) => {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.className = "out"; th.dataset.row = i; th.textContent = tok;
    th.addEventListener("mouseenter", () => highlightOutput(t, i));
    th.addEventListener("mouseleave", clearHighlight);
    row.appendChild(th);
    t.attention[i].forEach((a, j) => {
      const td = row.insertCell();
      td.className = "cell"; td.dataset.row = i; td.dataset.col = j;
      const level = Math.round(255 * (1 - a));
      td.style.background = `rgb(${level}, ${level}, ${level})`;
      td.title = `${tok} ← ${t.source_tokens[j]}: ${a.toFixed(3)}`;
      td.addEventListener("mouseenter", () => highlightCell(i, j));
      td.addEventListener("mouseleave", clearHighlight);
    });
  });
}

function attends(values, k) {
  const top = Math.max(...values);
  return values[k] >= THRESHOLD || values[k] === top;
}

function highlightSource(t, j) {  // the output words that attend to source word j
  mark(`th.src[data-col="${j}"]`);
  const column = t.attention.map((row) => row[j]);
  t.attention.forEach((row, i) => { if (attends(column, i) && column[i] > 0) mark(`th.out[data-row="${i}"]`); });
}

function highlightOutput(t, i) {  // the source words output word i attends to
  mark(`th.out[data-row="${i}"]`);
  t.attention[i].forEach((a, j) => { if (attends(t.attention[i], j)) mark(`th.src[data-col="${j}"]`); });
}

function highlightCell(i, j) {
  mark(`th.out[data-row="${i}"]`);
  mark(`th.src[data-col="${j}"]`);
  document.querySelector(`td.cell[data-row="${i}"][data-col="${j}"]`).classList.add("hl-cell");
}

function mark(selector) {
  document.querySelectorAll(`#heatmap ${selector}`).forEach((el) => el.classList.add("hl"));
}

function clearHighlight() {
  document.querySelectorAll("#heatmap .hl, #heatmap .hl-cell").forEach((el) => el.classList.remove("hl", "hl-cell"));
}

$("form").addEventListener("submit", translate);
$("source").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("form").requestSubmit();
});
loadInfo();
