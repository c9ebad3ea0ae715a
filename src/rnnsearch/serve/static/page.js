// The rnnsearch page: POST /translate with return_attention (searched with a beam, or sampled:
// n-best draws at a temperature), then draw the n-best list and the attention matrix alpha_ij
// (one row per output token and </s>, one column per source token); with a prefix, the
// translations begin with it. Or POST /score a translation
// the user typed: each word's log-probability, and the attention of the steps that emitted it.
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
    $("score-form").hidden = !health.score;  // scoring reads the PyTorch model (not ONNX)
  } catch (err) {
    $("model-info").textContent = "model information unavailable";
  }
}

function setStatus(text, isError, id = "status") {
  for (const other of ["status", "score-status"]) $(other).textContent = "";
  $(id).textContent = text;
  $(id).className = isError ? "error" : "";
}

// The glossary box's lines "source term = target term" as the API's entries; null if a line is not one.
function glossaryEntries(text) {
  const entries = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const at = line.indexOf("=");
    if (at < 0 || !line.slice(0, at).trim() || !line.slice(at + 1).trim()) return null;
    entries.push({source: line.slice(0, at).trim(), target: line.slice(at + 1).trim()});
  }
  return entries;
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
  if ($("prefix").value.trim()) request.prefix = $("prefix").value;  // the model completes it
  const glossary = glossaryEntries($("glossary").value);
  if (glossary === null) { setStatus("Write each glossary line as: source term = target term", true); return; }
  if (glossary.length) request.glossary = glossary;
  if ($("api-key").value.trim()) request.api_key = $("api-key").value.trim();  // --api-keys: this page's own
  setStatus("translating…", false);
  $("submit").disabled = true;
  try {
    const response = await fetch("/translate", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(request),
    });
    const body = await response.json();
    if (!response.ok) { setStatus(`${response.status}: ${body.error}`, true); return; }
    if (body.translations[0].error) { setStatus(body.translations[0].error, true); return; }
    show(body.translations[0]);
    setStatus(body.sample ? `done (${request.n_best} sampled at temperature ${body.sample.temperature})`
                          : `done (beam ${body.beam})`, false);
  } catch (err) {
    setStatus(`request failed: ${err}`, true);
  } finally {
    $("submit").disabled = false;
  }
}

async function scoreTarget(event) {
  event.preventDefault();
  const source = $("source").value, target = $("target").value;
  if (!source.trim()) { setStatus("Type the source sentence first.", true, "score-status"); return; }
  setStatus("scoring…", false, "score-status");
  $("score-submit").disabled = true;
  try {
    const response = await fetch("/score", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(Object.assign({source: source, target: target, return_units: true, return_attention: true},
                                         $("api-key").value.trim() ? {api_key: $("api-key").value.trim()} : {})),
    });
    const body = await response.json();
    if (!response.ok) { setStatus(`${response.status}: ${body.error}`, true, "score-status"); return; }
    showScore(target, body.scores[0]);
    setStatus("done (scored)", false, "score-status");
  } catch (err) {
    setStatus(`request failed: ${err}`, true, "score-status");
  } finally {
    $("score-submit").disabled = false;
  }
}

function showScore(target, s) {
  showResult("Your translation", target.trim() || "(empty: the end of the sentence only)", false);
  $("score-summary").textContent = `log p = ${s.logprob.toFixed(3)} over ${s.units} units ` +
    `(${s.per_unit.toFixed(3)} per unit${s.unknown ? `; ${s.unknown} unknown, read as <unk>` : ""})`;
  const units = $("units");
  units.replaceChildren();
  s.tokens.concat(["</s>"]).forEach((tok, i) => {
    const span = document.createElement("span");
    const p = Math.exp(s.unit_logprobs[i]);
    const level = Math.round(255 * p);  // white when certain, dark red when unlikely
    span.style.background = `rgb(255, ${level}, ${level})`;
    span.style.color = p < 0.4 ? "#fff" : "#1b1b1b";
    span.textContent = tok;
    span.title = `log p = ${s.unit_logprobs[i].toFixed(3)} (p = ${p.toFixed(3)})`;
    units.appendChild(span);
  });
  $("no-attention").hidden = s.attention !== null;
  drawHeatmap(s.attention ? s : null);
}

function showResult(title, text, searched) {
  $("result").hidden = false;
  $("result-title").textContent = title;
  $("translation").textContent = text;
  $("nbest-part").hidden = !searched;
  $("units-part").hidden = searched;
}

function show(t) {
  showResult("Translation", t.text, true);
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
$("score-form").addEventListener("submit", scoreTarget);
$("source").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("form").requestSubmit();
});
loadInfo();
