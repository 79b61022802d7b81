// The streaming overlay: the public feed only (the banker's face-down card arrives as null until its reveal),
// held back so that a card shows when the viewer sees it dealt on the video: by ?delay_ms=, else by the table's HLS
// stream's own lag (its playlist's dates), else by the table's fixed delay. It speaks its
// table's language (``display.language``) unless ?lang= names one. A coup game's (baccarat, Dragon Tiger) shows its
// sides, one banner for the winner, and the shoe's counts, Bead Plate and Big Road.
"use strict";

const table = tableFromPath();
// The phases' labels (i18n.json keys).
const LABELS = { betting: "overlay.phase.betting", dealing: "overlay.phase.dealing",
                 insurance: "overlay.phase.insurance", drawing: "overlay.phase.drawing",
                 settled: "overlay.phase.settled", void: "overlay.phase.void",
                 verifying: "overlay.phase.verifying" };
// Pok Deng's hand ranks (``services.games.pokdeng.hands``: 1 is best) as the game names them (i18n.json keys).
const HAND_RANKS = { 2: "pokdeng.rank.2", 3: "pokdeng.rank.3", 4: "pokdeng.rank.4", 5: "pokdeng.rank.5" };
let delay = 0; // ms every change is held back: ?delay_ms=, else the stream's own (``followStream``), else the table's
const MAX_DELAY_MS = 30_000;
const LIVE_SEGMENTS = 3; // a viewer's HLS player plays this many target durations behind the live edge (hls.js)
let about = {}; // the table: its game, and for a coup game its two sides (``page.sides``)
let view = {};
const pending = []; // [{due, value}] in arrival order

// " · 2 deng" after a hand that pays more than 1, "" otherwise.
function dengText(hand) {
  return hand && hand.multiplier > 1 ? " · " + t("pokdeng.deng", { n: hand.multiplier }) : "";
}

// A hand's name in the game's terms: "Pok 9 · 2 deng", "Tong · 5 deng", "7 points"; "" while a card is face down.
function handName(position, hand, result) {
  const settled = result && result.hands && result.hands[position];
  if (settled) {
    const name = settled.rank === 1 ? t("pokdeng.pok", { points: settled.points })
      : HAND_RANKS[settled.rank] ? t(HAND_RANKS[settled.rank]) : t("pokdeng.points", { points: settled.points });
    return name + dengText(settled);
  }
  if (hand.points === null || hand.points === undefined) return "";
  return hand.cards.length === 2 && hand.points >= 8 ? t("pokdeng.pok", { points: hand.points })
    : t("pokdeng.points", { points: hand.points });
}

function bannerText(seat, outcome, result) {
  if (outcome === "tie") return t("banner.tie", { seat });
  const winner = outcome === "seat" ? seat : "banker";
  const deng = dengText(result.hands && result.hands[winner]);
  return t(outcome === "seat" ? "banner.seat" : "banner.banker", { seat }) + deng;
}

// A coup game's hand (baccarat, Dragon Tiger): its side's name, and a baccarat hand's total once it has cards.
function coupHand(node, hand) {
  node.querySelector(".name").textContent = t("coup.side." + node.dataset.position);
  const points = node.querySelector(".points");
  points.textContent = about.game === "baccarat" && hand.cards.length ? t("coup.total", { total: hand.total }) : "";
  points.dataset.name = points.textContent;
}

// A coup game: its hands, one banner for the winner, and the shoe's roads beside.
function renderCoup() {
  const hands = handsNode(view);
  for (const node of hands.querySelectorAll(".hand")) coupHand(node, view.hands[node.dataset.position]);
  document.getElementById("hands").replaceChildren(hands);
  const result = view.phase === "settled" ? view.result : null;
  const banners = document.getElementById("banners");
  const key = view.round_id + ":" + (result ? result.winner : "");
  if (banners.dataset.key !== key) {
    banners.dataset.key = key;
    banners.replaceChildren(...(result ? [el("div", { class: "banner coup " + result.winner, "data-outcome": result.winner },
      result.winner === "tie" ? t("coup.result.tie") : t("coup.result.won", { side: t("coup.side." + result.winner) }))]
      : []));
  }
  const roads = document.getElementById("roads");
  const from = JSON.stringify(view.roads);
  if (roads.dataset.from !== from) {
    roads.dataset.from = from;
    roads.replaceChildren(roadsNode(view.roads, about.page.sides));
  }
}

function render() {
  document.getElementById("phase").textContent = LABELS[view.phase] ? t(LABELS[view.phase]) : view.phase || "";
  document.getElementById("timer").textContent = secondsLeft(view, Date.now() - delay);
  document.body.dataset.round = view.round_id || "";
  document.body.dataset.phase = view.phase || "";
  if (view.roads && about.page && about.page.sides) {
    renderCoup();
    return;
  }
  const hands = handsNode(view);
  for (const node of hands.querySelectorAll(".hand")) {
    const position = node.dataset.position;
    const name = handName(position, view.hands[position], view.result);
    const points = node.querySelector(".points");
    points.textContent = name;
    points.dataset.name = name;
  }
  document.getElementById("hands").replaceChildren(hands);
  const outcomes = (view.phase === "settled" && view.result && view.result.outcomes) || {};
  const banners = document.getElementById("banners");
  const key = view.round_id + ":" + Object.keys(outcomes).length;
  if (banners.dataset.key !== key) { // new banners only when the result arrives (so they animate once)
    banners.dataset.key = key;
    banners.replaceChildren(...Object.entries(outcomes).map(([seat, outcome]) =>
      el("div", { class: "banner " + outcome, "data-seat": seat, "data-outcome": outcome },
         bannerText(seat, outcome, view.result))));
  }
}

// Show every change whose time has come, in the order it arrived.
function release() {
  let changed = false;
  while (pending.length && pending[0].due <= Date.now()) {
    view = pending.shift().value;
    changed = true;
  }
  if (changed) render();
  document.getElementById("timer").textContent = secondsLeft(view, Date.now() - delay);
}

// How far behind now a viewer of the HLS stream at ``url`` sees the table: its playlist dates its segments
// (#EXT-X-PROGRAM-DATE-TIME), the live edge is the end of its last segment, and a player plays LIVE_SEGMENTS target
// durations behind that. null when the stream says nothing of its time (then the table's fixed delay holds).
async function streamLag(url) {
  const read = (address) => fetch(address, { cache: "no-store" }).then((r) => (r.ok ? r.text() : "")).catch(() => "");
  let text = await read(url);
  const variant = text.split(/\r?\n/).find((line, i, lines) => i > 0 && lines[i - 1].startsWith("#EXT-X-STREAM-INF"));
  if (variant) text = await read(new URL(variant, new URL(url, location.href)).href); // a master: its first rendition
  const target = Number((text.match(/#EXT-X-TARGETDURATION:([\d.]+)/) || [])[1] || 0);
  let clock = null; // the wall time (ms) where the next segment starts
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("#EXT-X-PROGRAM-DATE-TIME:")) clock = Date.parse(line.slice(25));
    else if (line.startsWith("#EXTINF:") && clock !== null) clock += parseFloat(line.slice(8)) * 1000;
  }
  if (clock === null || Number.isNaN(clock) || !target) return null;
  return Math.round(Date.now() - clock + LIVE_SEGMENTS * target * 1000);
}

// Follows the table's HLS stream: the delay is the viewers' lag, read again every few seconds.
async function followStream(url) {
  const lag = await streamLag(url);
  if (lag === null) return false;
  const update = (ms) => {
    delay = Math.min(Math.max(ms, 0), MAX_DELAY_MS);
    document.body.dataset.delay = String(delay);
  };
  update(lag);
  setInterval(async () => { const again = await streamLag(url); if (again !== null) update(again); }, 4_000);
  return true;
}

const LAYOUTS = ["bar", "corner"]; // ?layout=: a bar along the bottom (the default), or a column at the bottom right

async function start() {
  await I18N.ready;
  const query = new URLSearchParams(location.search);
  const asked = query.get("delay_ms");
  document.body.dataset.layout = LAYOUTS.includes(query.get("layout")) ? query.get("layout") : LAYOUTS[0];
  about = await fetch(`/v1/tables/${encodeURIComponent(table)}`).then((r) => r.json()).catch(() => ({}));
  const display = about.display || {};
  I18N.prefer(display.language);
  document.body.dataset.language = I18N.lang;
  const stream = (about.page || {}).stream_url || "";
  if (asked !== null && /^\d{1,5}$/.test(asked)) {
    delay = Number(asked);
    document.body.dataset.delaySource = "url";
  } else if (stream && isHls(stream) && await followStream(stream)) {
    document.body.dataset.delaySource = "stream";
  } else {
    delay = display.overlay_delay_ms || 0;
    document.body.dataset.delaySource = "table";
  }
  document.body.dataset.delay = String(delay);
  follow(`/v1/tables/${encodeURIComponent(table)}/state/stream`, {},
    (value) => { pending.push({ due: Date.now() + delay, value }); release(); },
    (state, message) => {
      const status = document.getElementById("status");
      status.className = "status " + state;
      status.textContent = state === "live" ? "" : state === "error" ? message || t("status.error")
        : t("status." + state);
      status.title = state === "offline" ? message : "";
    });
  setInterval(release, 50);
}

start();
