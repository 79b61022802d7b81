// Shared by the studio pages: reading a Server-Sent Events stream, drawing cards, hands and timers; and what the
// player's pages share: the message line, the chips, a slip's answer, the net, a history entry.
// Game-agnostic: a game's view lists its ``hands`` (position -> {cards, points?}) in the order to draw them.
// Its words come from i18n.js (``t``), loaded before it.
"use strict";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RANKS = { T: "10" };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// A card code as text: "Q♥", "10♠".
function cardText(code) {
  return (RANKS[code[0]] || code[0]) + SUITS[code[1]];
}

// A card code ("QH") face up; null (not revealed) or "received" (the dealer saw it scanned) face down.
function cardNode(code) {
  if (code === null || code === "received") {
    return el("span", { class: "card back", "data-card": code === null ? "hidden" : "received",
                        title: code === null ? t("card.face_down") : t("card.received") });
  }
  const red = code[1] === "H" || code[1] === "D";
  return el("span", { class: "card" + (red ? " red" : ""), "data-card": code }, cardText(code));
}

// A game's name in the page's language ("pokdeng" -> "Pok Deng").
function gameName(game) {
  return I18N.has("game." + game) ? t("game." + game) : game;
}

// A hand as the players call it: Pok Deng's "Banker", "Seat A"; a coup game's "Player", "Dragon", "Tiger".
function positionName(position) {
  if (position === "banker") return t("hand.banker");
  if (/^[A-Z]$/.test(position)) return t("hand.seat", { seat: position });
  return I18N.has("coup.side." + position) ? t("coup.side." + position) : position;
}

function handNode(position, hand, outcome) {
  const name = positionName(position);
  const points = hand.points === null || hand.points === undefined ? "" : t("hand.pts", { points: hand.points });
  const node = el("div", { class: "hand", "data-position": position },
    el("div", { class: "name" }, name),
    el("div", { class: "cards" }, ...hand.cards.map(cardNode)),
    el("div", { class: "points" }, points));
  if (outcome) {
    const text = ["seat", "banker", "tie"].includes(outcome) ? t("outcome." + outcome) : outcome;
    node.append(el("div", { class: "outcome " + outcome, "data-outcome": outcome }, text));
  }
  return node;
}

function handsNode(view) {
  const outcomes = (view.result && view.result.outcomes) || {};
  const hands = view.hands || {};
  return el("div", { class: "hands" },
    ...Object.entries(hands).map(([position, hand]) => handNode(position, hand, outcomes[position])));
}

// Seconds left until the open window closes (betting, insurance, a decision, a turn), or "" when none is open.
function secondsLeft(view, now = Date.now()) {
  const closes = view.window_closes_at;
  if (!closes) return "";
  return t("time.seconds", { n: Math.max(0, Math.ceil((Date.parse(closes) - now) / 1000)) });
}

// Follows a text/event-stream with fetch (so a bearer token can go in a header), reconnecting on loss, until
// ``signal`` (an AbortSignal, optional) aborts it.
async function follow(url, headers, onValue, onStatus, signal) {
  let delay = 500;
  while (!(signal && signal.aborted)) {
    try {
      const response = await fetch(url, { headers, cache: "no-store", signal });
      if (!response.ok) {
        let message = response.status + "";
        try { message = (await response.json()).message || message; } catch (_) { /* not JSON */ }
        onStatus("error", message);
        if (response.status === 401 || response.status === 403 || response.status === 404) return;
      } else {
        onStatus("live", "");
        delay = 500;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
            if (data) onValue(JSON.parse(data));
          }
        }
      }
    } catch (error) {
      if (signal && signal.aborted) return;
      onStatus("offline", String(error));
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 5000);
  }
}

function newKey() {
  return crypto.randomUUID ? crypto.randomUUID() : Date.now() + "-" + Math.random().toString(16).slice(2);
}

// A POST with the player's token. With an idempotency ``key`` (a request that moves money) it is retried with
// that same key when the network or the server fails, so the server does it once whatever reaches it; ``onRetry``
// is told. Resolves to the answer; rejects with {code, message, reason, params, status} (``refusalText`` says it).
async function postJSON(path, body, token, key = null, onRetry = () => {}) {
  const headers = { "Content-Type": "application/json", Authorization: "Bearer " + token };
  if (key) headers["Idempotency-Key"] = key;
  let delay = 400;
  for (let attempt = 0; ; attempt++) {
    let response = null;
    try {
      response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
    } catch (error) { /* the network dropped: retry below */ }
    if (response && response.status < 500) {
      const answer = await response.json().catch(() => ({}));
      if (response.ok) return answer;
      throw { code: answer.code || String(response.status), message: answer.message || response.statusText,
              reason: answer.reason || "", params: answer.params || {}, status: response.status };
    }
    if (!key || attempt >= 6) throw { code: "offline", message: t("error.unreachable"), status: 0 };
    onRetry();
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 4000);
  }
}

// ---- video: a table's stream, a staff recording ----------------------------------------------------------------

let hlsScript = null; // hls.js (vendor/hls.light.min.js, Apache-2.0), loaded the first time a page plays HLS

function loadHls() {
  if (window.Hls) return Promise.resolve(window.Hls);
  hlsScript = hlsScript || new Promise((resolve, reject) => {
    const script = el("script", { src: "/static/vendor/hls.light.min.js" });
    script.addEventListener("load", () => resolve(window.Hls));
    script.addEventListener("error", reject);
    document.head.append(script);
  });
  return hlsScript;
}

const isHls = (url) => new URL(url, location.href).pathname.endsWith(".m3u8");

// Plays ``url`` in ``video``: an HLS stream (.m3u8, the studios' norm) through hls.js where the browser has Media
// Source Extensions, else the browser's own HLS; any other URL as the video's source. ``headers`` go with each
// request (a recording needs the operator's token); ``start``: seconds into the stream (-1: the live edge);
// ``onFail()`` when it cannot be played (refused, gone). Resolves to the hls.js player (null without it).
async function playStream(video, url, { headers = {}, start = -1, onFail = () => {} } = {}) {
  if (!isHls(url)) {
    video.src = url;
    return null;
  }
  const Hls = await loadHls().catch(() => null);
  if (Hls && Hls.isSupported()) {
    const hls = new Hls({ startPosition: start, xhrSetup: (xhr) => {
      for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    } });
    hls.on(Hls.Events.ERROR, (_event, data) => { if (data.fatal) onFail(); });
    hls.loadSource(url);
    hls.attachMedia(video);
    return hls;
  }
  video.src = url; // Safari: HLS of its own (a recording's token cannot go with it there)
  if (start >= 0) video.addEventListener("loadedmetadata", () => { video.currentTime = start; }, { once: true });
  return null;
}

// Amounts in minor units as the table's currency, written as the page's language writes them.
function moneyFormat(currency) {
  const money = new Intl.NumberFormat(I18N.locale, { style: "currency", currency });
  const digits = money.resolvedOptions().maximumFractionDigits;
  return (amount) => money.format(amount / 10 ** digits);
}

function tableFromPath() {
  return decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
}

// A player's page without a valid sign-in: the token saved under ``key`` is forgotten and the form shown again.
function signedOut(key, message) {
  sessionStorage.removeItem(key);
  document.getElementById("login").hidden = false;
  document.getElementById("game").hidden = true;
  document.getElementById("login-error").textContent = message || "";
}

// ---- what the player's pages share (Pok Deng's, the coup games', the rooms') ----------------------------------

// A refusal in the reader's words, never the server's English: the words for its reason when the pages have them
// (refusal.reason.<reason>: a Tiến Lên play that does not beat the table, a seat taken…), with its params (card codes
// drawn as cards, amounts by ``format``); else the page's own words for its kind (the key ``own(code)`` names);
// else the pages' (refusal.<code>); else "not accepted", with the code for support.
const AMOUNTS = ["minimum", "maximum", "amount", "held"];
const CARD_CODE = /^(10|[2-9TJQKA])[SHDC]$/;
function refusalText(error, format = String, own = () => "") {
  const params = {};
  for (const [name, value] of Object.entries(error.params || {})) {
    const shown = (v) => (CARD_CODE.test(String(v)) ? cardText(String(v)) : String(v));
    if (Array.isArray(value)) params[name] = value.map(shown).join(" ");
    else params[name] = AMOUNTS.includes(name) ? format(value) : shown(value);
  }
  const keys = [error.reason ? "refusal.reason." + error.reason : "", own(error.code), "refusal." + error.code];
  const key = keys.find((each) => each && I18N.has(each));
  return key ? t(key, params) : t("refusal.other", { code: error.code || "" });
}

// The page's message line (#message): a sentence, its kind ("ok", "refused") and the code a test can select on.
function say(text, kind = "", code = "") {
  const message = document.getElementById("message");
  message.textContent = text;
  message.className = "message " + kind;
  message.dataset.code = code;
}

// The chips to stake with, as radio buttons in ``container``; ``onPick(value)`` when one is chosen (the first is).
function chipPicker(container, chips, format, onPick) {
  container.replaceChildren(...chips.map((value) => {
    const button = el("button", { type: "button", class: "chip", role: "radio", "data-chip": value,
                                  "aria-checked": String(value === chips[0]) }, format(value));
    button.addEventListener("click", () => {
      for (const other of container.children) other.setAttribute("aria-checked", String(other === button));
      onPick(value);
    });
    return button;
  }));
  onPick(chips[0]);
}

// The player's own wagers after a slip's answer: the answer's wagers replace the ones it names.
function withSlip(wagers, answer) {
  const others = (wagers || []).filter((w) => !answer.wagers.some((a) => a.wager_id === w.wager_id));
  return [...others, ...answer.wagers.map((w) => ({ ...w, net: null }))];
}

// "Your net this round: +฿90.00", coloured by its sign (#net, with data-net for tests).
function netNode(net, format) {
  return el("div", { class: "net " + (net >= 0 ? "plus" : "minus"), id: "net", "data-net": net },
    t("play.net", { net: (net > 0 ? "+" : "") + format(net) }));
}

// One round of the player's history (``GET /v1/history``): its number, stakes and net (or what became of it), its
// hands as ``handName`` names them, and each correction made after it settled.
function historyItem(round, stakes, handName, format, phases) {
  const hands = Object.entries(round.hands || {}).map(([position, hand]) =>
    handName(position) + " " + hand.cards.map(cardText).join(" ")).join(" · ");
  const net = round.net === null
    ? (round.phase === "void" ? t("play.history.void") : phases[round.phase] ? t(phases[round.phase]) : round.phase)
    : t("play.history.net", { net: (round.net > 0 ? "+" : "") + format(round.net) });
  const item = el("li", { "data-round": round.round_id },
    el("div", {}, `#${round.number} · ${stakes} · `, el("strong", {}, net)),
    el("div", { class: "cards-line" }, hands));
  for (const fix of round.corrections || []) {
    item.append(el("div", { class: "hint", "data-correction": fix.amount },
      t("play.history.corrected", { amount: (fix.amount > 0 ? "+" : "") + format(fix.amount), memo: fix.memo })));
  }
  return item;
}

// The top of a player's page: the phase in words (``phases``: phase -> key), the countdown, the ``hands`` node, and
// the round and phase on <body> (what tests and styles select on).
function showTable(view, phases, hands) {
  const $ = (id) => document.getElementById(id);
  $("phase").textContent = phases[view.phase] ? t(phases[view.phase]) : view.phase || t("play.waiting");
  $("timer").textContent = secondsLeft(view);
  $("hands").replaceChildren(hands);
  document.body.dataset.round = view.round_id || "";
  document.body.dataset.phase = view.phase || "";
}

// The player's balance and what is held of it, once their stream has said.
function showWallet(wallet, format) {
  if (!wallet || wallet.balance === undefined) return;
  const balance = document.getElementById("balance");
  balance.textContent = format(wallet.balance);
  balance.dataset.amount = wallet.balance;
  document.getElementById("held").textContent = format(wallet.held || 0);
}
