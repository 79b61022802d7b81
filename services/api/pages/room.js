// A room of a seated game. Mậu Binh: the seats (taken, ready, arranged), the countdown, the player's own 13 cards to
// arrange, the showdown chi by chi, the units each seat won or paid. Tiến Lên: whose turn, the play on the table,
// who passed, the chops, the player's own hand to play from. A player's own cards come from their seat's private
// stream only. Actions are the room's API routes: sit (with an idempotency key), ready, leave, arrange, play, pass.
"use strict";

const table = tableFromPath();
const TOKEN = "studio.room.token";
const SEATS = ["1", "2", "3", "4"];
const PHASES = ["seating", "dealing", "arranging", "showdown", "playing", "settled", "void"]; // room.phase.<phase>
// A seat's state: data-state keeps these English words (tests and styles select on them); the text is translated.
const STATES = { free: "room.state.free", left: "room.state.left", ready: "room.state.ready",
                 "not ready": "room.state.not_ready", arranged: "room.state.arranged",
                 "arranging…": "room.state.arranging", "to play": "room.state.to_play", passed: "room.state.passed" };

let token = sessionStorage.getItem(TOKEN) || "";
let format = (amount) => String(amount);
let unit = 1;
let view = {}; // the room's public state
let mine = { you: {}, wallet: {} }; // the player's own view: the seats they hold, their wallet
let seatView = null; // their seat's private view: their cards, the suggestion
let seatStream = null; // { seat, round, abort }
let rows = null; // the arrangement being edited: [[5 codes], [5], [3]]
let picked = null; // [row, index] of the first card tapped for a swap
let misSet = null; // the arrangement (as JSON) the room refused as binh lủng: the player may confirm it as it is
let busy = false;
let sitKey = null;
let game = "";
const chosen = new Set(); // Tiến Lên: the cards picked to play

const $ = (id) => document.getElementById(id);

async function act(action, body, key = null, refused = () => {}) {
  if (busy) return null;
  busy = true;
  render();
  try {
    return await postJSON(`/v1/rounds/${encodeURIComponent(view.round_id)}/${action}`, body, token, key,
                          () => say(t("message.retrying"), "refused", "retrying"));
  } catch (error) {
    refused(error);
    say(refusalText(error, format, (code) => "room.refusal." + code), "refused", error.code);
    if (error.status === 401) showLogin(t("login.again"));
    return null;
  } finally {
    busy = false;
    render();
  }
}

function mySeat() {
  return mine.round_id === view.round_id ? ((mine.you || {}).seats || [])[0] : undefined;
}

// ---- the seat's private stream: opened for the seat this player holds in the current round ----

function followSeat() {
  const seat = mySeat();
  const want = seat ? seat + "@" + view.round_id : "";
  if ((seatStream && seatStream.key) === want) return;
  if (seatStream) seatStream.abort.abort();
  seatStream = null;
  seatView = null;
  rows = null;
  if (!seat) return;
  const abort = new AbortController();
  seatStream = { key: want, abort };
  follow(`/v1/tables/${encodeURIComponent(table)}/seats/${seat}/stream`, { Authorization: "Bearer " + token },
    (value) => {
      seatView = value;
      if (!rows && value.suggestion) rows = value.suggestion.chi.map((chi) => chi.slice());
      render();
    }, () => {}, abort.signal);
}

// ---- drawing ----

function seatNode(seat) {
  const taken = (view.seats || []).includes(seat);
  const state = !taken ? "free" : (view.left || []).includes(seat) ? "left"
    : view.phase === "seating" ? ((view.ready || []).includes(seat) ? "ready" : "not ready")
    : (view.arranged || []).includes(seat) ? "arranged" : view.phase === "arranging" ? "arranging…" : "";
  const node = el("div", { class: "seat" + (seat === mySeat() ? " mine" : ""), "data-seat": seat,
                           "data-state": state },
    el("strong", {}, t(seat === mySeat() ? "room.seat_you" : "room.seat", { seat })), " ",
    el("span", { class: "state" }, stateText(state)));
  const hand = ((view.hands || {})[seat] || {}).cards || [];
  const own = seat === mySeat() && seatView ? ((seatView.hands || {})[seat] || {}).cards || [] : null;
  if (game === "tienlen") return tienlenSeat(node, seat, taken, hand);
  const chis = (view.chi || {})[seat];
  if (chis) {
    chis.forEach((chi, index) => node.append(el("div", { class: "chi-row", "data-chi": index + 1 },
      el("span", { class: "label" }, t("maubinh.chi", { n: index + 1 })), ...chi.cards.map(small),
      el("span", { class: "name", "data-name": chi.name }, chiName(chi.name)))));
  } else if (hand.length) {
    node.append(el("div", { class: "chi-row" }, ...(own || hand).map(small)));
  }
  const units = ((view.result || {}).units || {})[seat];
  if (units !== undefined) {
    node.append(el("div", { class: "units " + (units >= 0 ? "plus" : "minus"), "data-units": units },
      unitsText(units)));
  }
  seatActions(node, seat, taken);
  return node;
}

function stateText(state) {
  return STATES[state] ? t(STATES[state]) : state;
}

// A Mậu Binh chi's hand ("full_house") in the game's terms: "cù lũ".
function chiName(name) {
  return I18N.has("maubinh.hand." + name) ? t("maubinh.hand." + name) : name.replaceAll("_", " ");
}

// "+3 units (฿30.00)"
function unitsText(units) {
  return t("room.units", { units: (units > 0 ? "+" : "") + units, money: format(units * unit) });
}

let leaving = ""; // Tiến Lên: the round whose "leave" the player pressed once; a second press confirms it

function seatActions(node, seat, taken) {
  if (view.phase === "seating" && !taken && !mySeat()) {
    node.append(button(t("room.sit"), () => sit(seat), { "data-sit": seat }));
  }
  if (seat !== mySeat()) return;
  if (game === "maubinh" && view.phase === "seating" && !(view.ready || []).includes(seat)) {
    node.append(button(t("room.ready"), () => act("ready", {}), { "data-ready": seat }));
  }
  if (view.phase === "seating") {
    node.append(button(t("room.leave"), () => act("leave", {}), { "data-leave": seat }));
  } else if (game === "tienlen" && view.phase === "playing" && !(view.left || []).includes(seat)) {
    if (leaving !== view.round_id) {
      node.append(button(t("room.leave"), () => { leaving = view.round_id; render(); }, { "data-leave": seat }));
    } else {  // leaving mid-round costs money: said, and asked once more
      node.append(el("p", { class: "hint" }, t("tienlen.leave_warning")),
        button(t("tienlen.leave_confirm"), () => act("leave", {}), { class: "danger", "data-leave-confirm": seat }),
        button(t("tienlen.leave_stay"), () => { leaving = ""; render(); }, { "data-stay": seat }));
    }
  }
}

// ---- Tiến Lên ----

function tienlenSeat(node, seat, taken, hand) {
  const state = !taken ? "free" : (view.left || []).includes(seat) ? "left" : view.turn === seat ? "to play"
    : (view.passed || []).includes(seat) ? "passed" : "";
  node.dataset.state = state;
  node.querySelector(".state").textContent = stateText(state)
    + (taken && hand.length ? " · " + t("tienlen.cards_left", { n: hand.length }) : "");
  if (taken && seat !== mySeat() && view.phase === "playing" && hand.length) { // an opponent's hand: its backs
    node.append(el("div", { class: "backs", "data-count": hand.length, "aria-hidden": "true" },
      ...hand.map(() => small(null))));
  }
  const result = view.result;
  if (result && result.units && result.units[seat] !== undefined) {
    const units = result.units[seat];
    node.append(el("div", { class: "units " + (units >= 0 ? "plus" : "minus"), "data-units": units },
      unitsText(units) + (result.winner === seat ? " — " + t("tienlen.wins") : "")));
  }
  seatActions(node, seat, taken);
  return node;
}

let saidTimedOut = ""; // the move made for this player on time-out that the page last said (said once)

// A move the table made for this player when their turn ran out (the lowest card led, or a pass): said, not silent.
function sayTimedOut() {
  const moved = view.timed_out;
  const key = moved ? JSON.stringify([view.round_id, moved, view.table, view.passed]) : "";
  if (!moved || moved.seat !== mySeat() || key === saidTimedOut) return;
  saidTimedOut = key;
  say(moved.cards.length ? t("tienlen.timed_out.played", { cards: moved.cards.map(cardText).join(" ") })
    : t("tienlen.timed_out.passed"), "refused", "timed_out");
}

let saidLeft = ""; // the round in which the page said this player is out of it (said once)

// Out of the round: by their own word, or because their turn ran out time after time.
function sayLeft() {
  const seat = mySeat();
  if (!seat || !(view.left || []).includes(seat) || saidLeft === view.round_id) return;
  saidLeft = view.round_id;
  say(t((view.dropped || []).includes(seat) ? "tienlen.dropped" : "tienlen.left"), "refused", "left");
}

function renderTienlen() {
  const playing = game === "tienlen" && (view.phase === "playing" || view.phase === "settled");
  if (playing) sayTimedOut();
  if (playing) sayLeft();
  $("trick").hidden = !playing;
  const seat = mySeat();
  const own = seat && seatView ? ((seatView.hands || {})[seat] || {}).cards || [] : [];
  $("hand").hidden = !(playing && view.phase === "playing" && own.length);
  if (!playing) return;
  const top = view.table || { cards: [] };
  $("top").replaceChildren(...top.cards.map(small), el("span", { class: "name" },
    top.cards.length ? t("tienlen.played_by", { seat: top.seat })
      : view.turn ? t("tienlen.leads", { seat: view.turn }) : ""));
  $("chops").replaceChildren(...(view.chops || []).map((chop) => el("li", { "data-chop": chop.by },
    t("tienlen.chop", { by: chop.by, chopped: chop.chopped, cards: chop.cards.map(cardText).join(" "),
                        units: chop.units }))));
  for (const code of [...chosen]) if (!own.includes(code)) chosen.delete(code);
  $("cards").replaceChildren(...own.map((code) => {
    const node = cardNode(code);
    if (chosen.has(code)) node.classList.add("picked");
    node.addEventListener("click", () => {
      if (chosen.has(code)) chosen.delete(code); else chosen.add(code);
      renderTienlen();
    });
    return node;
  }));
  $("play").disabled = busy || chosen.size === 0;
  $("pass").disabled = busy || view.turn !== seat || !top.cards.length;
}

async function play() {
  const cards = [...chosen];
  if (await act("play", { cards })) {
    chosen.clear();
    say(t("tienlen.played", { cards: cards.map(cardText).join(" ") }), "ok", "played");
  }
}

async function passTurn() {
  if (await act("pass", {})) say(t("tienlen.passed"), "ok", "passed");
}

function small(code) {
  const node = cardNode(code);
  node.classList.add("small");
  return node;
}

function button(label, onClick, attrs = {}) {
  const node = el("button", { type: "button", ...attrs }, label);
  node.disabled = busy;
  node.addEventListener("click", onClick);
  return node;
}

async function sit(seat) {
  sitKey = sitKey || newKey(); // one seat per click, whatever retries it takes
  const answer = await act("sit", { seat }, sitKey);
  sitKey = null;
  // a Mậu Binh seat's hold follows the players seated; a Tiến Lên seat's is the room's, whoever sits
  if (answer) say(t(game === "maubinh" ? "maubinh.seated" : "room.seated", { seat, held: format(answer.held) }), "ok",
                  "seated");
}

// Mậu Binh: an arrangement the room refused as binh lủng is sent again only on the player's word, and only as it
// was refused (any swap asks again).
async function submitArrangement(confirmed) {
  const [chi1, chi2, chi3] = rows;
  const sent = JSON.stringify(rows);
  const answer = await act("arrange", confirmed ? { chi1, chi2, chi3, confirm_binh_lung: true } : { chi1, chi2, chi3 },
                           null, (error) => { if (error.reason === "binh_lung_unconfirmed") misSet = sent; });
  if (answer) {
    misSet = null;
    say(t(confirmed ? "maubinh.submitted_lung" : "maubinh.submitted"), "ok", "arranged");
  }
  renderArrange();
}

function renderArrange() {
  const box = $("arrange");
  const seat = mySeat();
  const open = view.phase === "arranging" && seat && rows && !(view.arranged || []).includes(seat)
    && !(view.left || []).includes(seat);
  box.hidden = !open;
  $("confirm-lung").hidden = !open || misSet !== JSON.stringify(rows);
  if (!open) return;
  $("rows").replaceChildren(...rows.map((chi, row) => el("div", { class: "chi-row", "data-row": row + 1 },
    el("span", { class: "label" }, t("maubinh.chi", { n: row + 1 })),
    ...chi.map((code, index) => {
      const node = cardNode(code);
      if (picked && picked[0] === row && picked[1] === index) node.classList.add("picked");
      node.addEventListener("click", () => tap(row, index));
      return node;
    }))));
  $("submit").disabled = busy;
}

function tap(row, index) {
  if (!picked) {
    picked = [row, index];
  } else {
    const [r, i] = picked;
    [rows[r][i], rows[row][index]] = [rows[row][index], rows[r][i]];
    picked = null;
  }
  renderArrange();
}

function renderResult() {
  const box = $("result");
  const seat = mySeat();
  const units = seat && view.result ? view.result.units[seat] : undefined;
  box.hidden = units === undefined;
  if (units === undefined) return;
  const n = Math.abs(units);
  const key = "room.result." + (units >= 0 ? "won" : "paid"); // "… 1 unit …" by the plural rule of ``t``
  box.replaceChildren(el("div", { class: "net " + (units >= 0 ? "plus" : "minus"), id: "net", "data-units": units },
    t(key, { n, money: format(n * unit) })));
}

function render() {
  const watching = view.phase === "arranging" && !mySeat(); // a spectator is not told to arrange
  $("phase").textContent = watching ? t("room.others_arranging") : PHASES.includes(view.phase)
    ? t("room.phase." + view.phase) : view.phase || t("room.waiting");
  $("timer").textContent = secondsLeft(view);
  const shuffle = view.shuffle;
  $("shuffle").textContent = !shuffle ? t("room.shoe") : shuffle.deck
    ? t("room.shuffle_revealed", { commitment: shuffle.commitment })
    : t("room.shuffle_committed", { commitment: shuffle.commitment });
  $("seats").replaceChildren(...SEATS.map(seatNode));
  const wallet = mine.wallet || {};
  if (wallet.balance !== undefined) {
    $("balance").textContent = format(wallet.balance);
    $("balance").dataset.amount = wallet.balance;
    $("held").textContent = format(wallet.held);
  }
  document.body.dataset.round = view.round_id || "";
  document.body.dataset.phase = view.phase || "";
  renderArrange();
  renderTienlen();
  renderResult();
}

// ---- start-up ----

function showLogin(message) {
  signedOut(TOKEN, message);
}

function status(state, message) {
  $("status").textContent = state === "error" ? message || t("status.error") : t("status." + state);
  $("status").title = state === "offline" ? message : "";
  $("status").className = "status " + state;
  $("offline").hidden = state !== "offline";
  if (state === "error" && /token/.test(message)) showLogin(message);
}

async function start() {
  $("login").hidden = true;
  $("game").hidden = false;
  const me = await fetch("/v1/me", { headers: { Authorization: "Bearer " + token } });
  if (!me.ok) {
    showLogin(t("login.refused"));
    return;
  }
  follow(`/v1/tables/${encodeURIComponent(table)}/state/stream`, {}, (value) => {
    if (value.round_id !== view.round_id) say("");
    view = value;
    followSeat();
    render();
  }, status);
  follow(`/v1/tables/${encodeURIComponent(table)}/me/stream`, { Authorization: "Bearer " + token }, (value) => {
    const out = (value.you || {}).unfunded; // their seat went back before the deal: the hand grew past their balance
    if (out && value.round_id === view.round_id && JSON.stringify(out) !== JSON.stringify((mine.you || {}).unfunded)) {
      say(t("room.unfunded", { seat: out.seat, n: out.players }), "refused", "unfunded");
    }
    mine = value;
    followSeat();
    render();
  }, status);
}

async function init() {
  const info = await (await fetch(`/v1/tables/${encodeURIComponent(table)}`)).json().catch(() => null);
  if (!info || !String(info.player_page).startsWith("/room/")) {  // a table whose game plays elsewhere
    say(t("room.not_a_room"), "refused", "not_found");
    return;
  }
  game = info.game;
  $("table").textContent = gameName(game) + " · " + table;
  document.title = gameName(game) + " · " + table;
  $("play").addEventListener("click", play);
  $("pass").addEventListener("click", passTurn);
  format = moneyFormat(info.currency);
  unit = info.settings.unit;
  $("submit").addEventListener("click", () => submitArrangement(false));
  $("confirm-lung").addEventListener("click", () => submitArrangement(true));
  $("suggest").addEventListener("click", () => {
    if (seatView && seatView.suggestion) rows = seatView.suggestion.chi.map((chi) => chi.slice());
    picked = null;
    renderArrange();
  });
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN, token);
    start();
  });
  setInterval(() => { $("timer").textContent = secondsLeft(view); }, 250);
  if (token) start(); else showLogin("");
}

I18N.ready.then(init);
