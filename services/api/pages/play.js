// The player's page of a live Pok Deng table. It reads two streams only: the table's public state (cards as
// they are revealed, phase, countdown, result) and the player's own (their wagers, the insurance they may buy,
// the draw/stand choice that is theirs, their net and wallet). Bets, insurance and decisions are API calls.
"use strict";

const table = tableFromPath();
const TOKEN = "studio.play.token";
const SEATS = ["A", "B", "C"];
const SIDES = ["player", "banker"];
const HAND_NAMES = { 2: "Tong", 3: "Straight flush", 4: "Straight", 5: "Three face cards" };
const PHASES = { betting: "Place your bets", dealing: "Dealing", insurance: "Insurance", drawing: "Third cards",
                 settled: "Result", void: "Round void" };
// What a refusal means for the player, by the API's error code (the API's own message follows for the rest).
const REFUSALS = {
  betting_closed: "Betting has closed for this round. Your bet was not placed.",
  insufficient_funds: "Not enough balance: a bet holds 3 × its stake until the round settles.",
  invalid_wager: "That bet is not allowed here",
  invalid_insurance: "That insurance is not available",
  window_closed: "Too late: that window has closed.",
  not_expected_now: "Not now: the round has moved on.",
  not_your_decision: "That choice is not yours to make.",
  idempotency_conflict: "That request was already used for something else; try again.",
  unauthorized: "Your sign-in is no longer valid: sign in again.",
};

let token = sessionStorage.getItem(TOKEN) || "";
let info = null; // the table: currency, settings, chips, stream
let view = {}; // the public state of the current round
let mine = { you: {}, wallet: {} }; // the player's own view
let chip = null;
const staged = new Map(); // "side:seat" -> stake not yet sent
let slipKey = null; // the idempotency key of the staged slip: made when it is sent, kept for its retries
let sending = false;
let insureKey = null;
let busy = false; // an insurance or decision call in flight
let historyRound = "";
let format = (amount) => String(amount);

const $ = (id) => document.getElementById(id);

function say(text, kind = "", code = "") {
  const message = $("message");
  message.textContent = text;
  message.className = "message " + kind;
  message.dataset.code = code;
}

async function post(path, body, key) {
  try {
    return await postJSON(path, body, token, key, () => say("Connection lost — retrying…", "refused", "retrying"));
  } catch (error) {
    if (error.status === 401) showLogin(error.message);
    throw error;
  }
}

async function get(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  if (response.status === 401) showLogin("sign in again");
  if (!response.ok) throw new Error(response.status + "");
  return response.json();
}

function refused(error) {
  const plain = REFUSALS[error.code];
  const text = !plain ? error.message : plain.endsWith(".") ? plain : plain + ": " + error.message;
  say(text, "refused", error.code);
}

// ---- what the page shows -------------------------------------------------------------------

function current() {
  // The player's own view, if it is of the round the public state shows.
  return mine.round_id && mine.round_id === view.round_id ? mine.you || {} : {};
}

function bettingOpen() {
  return view.phase === "betting" && (!view.window_closes_at || Date.parse(view.window_closes_at) > Date.now());
}

function sideTaken() {
  const wagers = current().wagers || [];
  if (wagers.length) return wagers[0].side;
  const first = staged.keys().next();
  return first.done ? null : first.value.split(":")[0];
}

function renderWallet() {
  const wallet = mine.wallet || {};
  if (wallet.balance === undefined) return;
  $("balance").textContent = format(wallet.balance);
  $("balance").dataset.amount = wallet.balance;
  $("held").textContent = format(wallet.held);
}

let drawn = { spots: "", prompt: "" }; // what each part was last drawn from: redrawn only when it changes

function renderSpots() {
  const wagers = current().wagers || [];
  const taken = sideTaken();
  const open = bettingOpen() && !sending;
  const from = JSON.stringify([wagers, [...staged], taken, open, chip, sending, mine.wallet]);
  if (from === drawn.spots) return;
  drawn.spots = from;
  $("spots").replaceChildren(...SIDES.flatMap((side) => SEATS.map((seat) => {
    const placed = wagers.filter((w) => w.side === side && w.seat === seat).reduce((sum, w) => sum + w.stake, 0);
    const pending = staged.get(side + ":" + seat) || 0;
    const other = taken && taken !== side;
    const spot = el("button", { type: "button", class: "spot " + side, "data-side": side, "data-seat": seat,
                                title: other ? "One side per round: you are on the " + taken + " side" : "" },
      el("span", { class: "label" }, side === "player" ? "Player " + seat : "Banker vs " + seat),
      el("span", { class: "stake" }, placed ? format(placed) : ""),
      el("span", { class: "staged" }, pending ? "+" + format(pending) : ""));
    spot.disabled = !open || other || !chip;
    spot.addEventListener("click", () => stake(side, seat));
    return spot;
  })));
  $("place").disabled = !open || staged.size === 0;
  $("place").textContent = sending ? "Placing…" : "Place bets";
  $("clear").disabled = sending || staged.size === 0;
}

function stake(side, seat) {
  if (sending || !chip || !bettingOpen()) return;
  const taken = sideTaken();
  if (taken && taken !== side) return;
  const key = side + ":" + seat;
  staged.set(key, (staged.get(key) || 0) + chip);
  slipKey = null; // a different slip: it gets its own key when sent
  say("");
  renderSpots();
}

async function placeBets() {
  if (sending || staged.size === 0 || !bettingOpen()) return; // a second click of a double click stops here
  const round = view.round_id;
  const bets = [...staged].map(([key, amount]) => {
    const [side, seat] = key.split(":");
    return { side, seat, stake: amount };
  });
  slipKey = slipKey || newKey();
  sending = true;
  renderSpots();
  try {
    const answer = await post(`/v1/rounds/${encodeURIComponent(round)}/bets`, { bets }, slipKey);
    if (mine.round_id === round) {
      const others = (mine.you.wagers || []).filter((w) => !answer.wagers.some((a) => a.wager_id === w.wager_id));
      mine.you.wagers = [...others, ...answer.wagers.map((w) => ({ ...w, net: null }))];
    }
    say("Bet placed: " + bets.map((b) => `${b.side} ${b.seat} ${format(b.stake)}`).join(", "), "ok", "placed");
  } catch (error) {
    refused(error);
  }
  staged.clear();
  slipKey = null;
  sending = false;
  render();
}

function renderPrompt() {
  const you = current();
  const prompt = $("prompt");
  const from = JSON.stringify([view.round_id, view.phase, you.decision, you.insurance_offer, busy]);
  if (from === drawn.prompt) return;
  drawn.prompt = from;
  const closes = el("span", { class: "countdown" }, secondsLeft(view));
  if (you.decision && view.phase === "drawing") {
    const { seat, points, threshold } = you.decision;
    const auto = points <= threshold ? "draws" : "stands";
    prompt.dataset.kind = "decision";
    prompt.replaceChildren(
      el("strong", {}, `Seat ${seat} is yours to play: ${points} points. Draw a third card?`),
      el("div", { class: "hint" }, "If time runs out (", closes, `) the seat ${auto} — your threshold is ${threshold}.`),
      el("div", { class: "row" }, choiceButton(seat, "draw", "Draw"), choiceButton(seat, "stand", "Stand")));
    prompt.hidden = false;
    return;
  }
  if ((you.insurance_offer || []).length && view.phase === "insurance") {
    prompt.dataset.kind = "insurance";
    const buttons = you.insurance_offer.map((amount) => {
      const button = el("button", { type: "button", "data-amount": amount }, "Insure " + format(amount));
      button.disabled = busy;
      button.addEventListener("click", () => insure(amount));
      return button;
    });
    prompt.replaceChildren(
      el("strong", {}, "The banker shows " + ((view.hands.banker || {}).cards || [])[0] + ": buy insurance?"),
      el("div", { class: "hint" }, "Pays 1.2 to 1 if the banker has Pok; lost otherwise. Closes in ", closes),
      el("div", { class: "row" }, ...buttons));
    prompt.hidden = false;
    return;
  }
  prompt.hidden = true;
  prompt.dataset.kind = "";
  prompt.replaceChildren();
}

function choiceButton(seat, choice, label) {
  const button = el("button", { type: "button", class: "primary", "data-choice": choice }, label);
  button.disabled = busy;
  button.addEventListener("click", () => decide(seat, choice));
  return button;
}

async function insure(amount) {
  if (busy) return;
  busy = true;
  insureKey = insureKey || newKey(); // one purchase per round: retries and double clicks reuse it
  renderPrompt();
  try {
    const round = view.round_id;
    await post(`/v1/rounds/${encodeURIComponent(round)}/insurance`, { amount }, insureKey);
    if (mine.round_id === round) mine.you = { ...mine.you, insurance: amount, insurance_offer: [] };
    say("Insured for " + format(amount), "ok", "insured");
  } catch (error) {
    refused(error);
  }
  busy = false;
  render();
}

async function decide(seat, choice) {
  if (busy) return;
  busy = true;
  renderPrompt();
  try {
    await post(`/v1/rounds/${encodeURIComponent(view.round_id)}/decisions`, { seat, choice }, null);
    // the private stream may already have brought the next seat's choice: clear only the one made
    if (mine.you.decision && mine.you.decision.seat === seat) mine.you = { ...mine.you, decision: null };
    say(`Seat ${seat}: ${choice}`, "ok", "decided");
  } catch (error) {
    refused(error);
  }
  busy = false;
  render();
}

function handName(hand) {
  if (hand.rank === 1) return "Pok " + hand.points;
  return HAND_NAMES[hand.rank] || hand.points + " points";
}

function renderResult() {
  const box = $("result");
  const result = view.result;
  if (!result || view.phase !== "settled") {
    box.hidden = view.phase !== "void";
    box.replaceChildren(view.phase === "void" ? el("strong", {}, "Round void: every stake comes back.") : "");
    return;
  }
  const outcomes = result.outcomes || {};
  const lines = Object.entries(result.hands).map(([position, hand]) => {
    const outcome = { seat: "seat wins", banker: "banker wins", tie: "tie" }[outcomes[position]] || "";
    return el("div", { class: "hand-line", "data-position": position },
      el("strong", {}, position === "banker" ? "Banker" : "Seat " + position),
      el("span", { class: "cards" }, ...hand.cards.map(cardNode)),
      el("span", { class: "name" }, `${handName(hand)} ×${hand.multiplier}`),
      el("span", { class: "outcome" }, outcome));
  });
  const net = current().net;
  const children = [el("h2", {}, "Result"), ...lines];
  if (net !== null && net !== undefined) {
    children.push(el("div", { class: "net " + (net >= 0 ? "plus" : "minus"), id: "net", "data-net": net },
      "Your net this round: " + (net > 0 ? "+" : "") + format(net)));
  }
  box.replaceChildren(...children);
  box.hidden = false;
}

function renderTable() {
  $("phase").textContent = PHASES[view.phase] || view.phase || "Waiting for the first round";
  $("timer").textContent = secondsLeft(view);
  $("hands").replaceChildren(handsNode(view));
  document.body.dataset.round = view.round_id || "";
  document.body.dataset.phase = view.phase || "";
}

function render() {
  renderTable();
  renderWallet();
  renderSpots();
  renderPrompt();
  renderResult();
}

async function loadHistory() {
  const rounds = await get("/v1/history?limit=10").catch(() => null);
  if (!rounds) return;
  $("history").replaceChildren(...rounds.map((round) => {
    const hands = Object.entries(round.hands || {}).map(([position, hand]) =>
      (position === "banker" ? "Banker" : position) + " " + hand.cards.map(cardText).join(" ")).join(" · ");
    const stakes = round.wagers.map((w) => `${w.side} ${w.seat} ${format(w.stake)}`).join(", ");
    const net = round.net === null ? (round.phase === "void" ? "void — stakes returned" : round.phase)
      : "net " + (round.net > 0 ? "+" : "") + format(round.net);
    const item = el("li", { "data-round": round.round_id },
      el("div", {}, `#${round.number} · ${stakes} · `, el("strong", {}, net)),
      el("div", { class: "cards-line" }, hands));
    for (const fix of round.corrections || []) {
      item.append(el("div", { class: "hint", "data-correction": fix.amount },
        `corrected ${fix.amount > 0 ? "+" : ""}${format(fix.amount)}: ${fix.memo}`));
    }
    return item;
  }));
}

// ---- streams and start-up ------------------------------------------------------------------

const links = { public: "", mine: "" };
let networkDown = false;

function status(which, state, message) {
  if (which) links[which] = state;
  const online = links.public === "live" && links.mine === "live" && !networkDown;
  $("offline").hidden = online || (!links.public && !links.mine);
  $("status").textContent = online ? "live" : networkDown ? "offline" : message || "reconnecting";
  $("status").className = "status " + (online ? "live" : state);
  if (state === "error" && /token/.test(message)) showLogin(message);
}

function onPublic(value) {
  const before = view;
  view = value;
  if (before.round_id !== view.round_id) {
    staged.clear();
    slipKey = null;
    insureKey = null;
    say("");
  }
  refreshHistory();
  render();
}

function onMine(value) {
  mine = value;
  refreshHistory();
  render();
}

// The history is read again when a round ends, and when a settled round changes (a correction).
function refreshHistory() {
  if (view.phase !== "settled" && view.phase !== "void") return;
  const key = JSON.stringify([view.round_id, view.phase, view.result, current().net]);
  if (key === historyRound) return;
  historyRound = key;
  loadHistory();
}

function showLogin(message) {
  signedOut(TOKEN, message);
}

async function start() {
  $("login").hidden = true;
  $("game").hidden = false;
  try {
    await get("/v1/me").then((me) => { $("threshold").value = String(me.threshold || 4); });
  } catch (error) {
    showLogin("That token was not accepted.");
    return;
  }
  const headers = { Authorization: "Bearer " + token };
  follow(`/v1/tables/${encodeURIComponent(table)}/state/stream`, {}, onPublic, (s, m) => status("public", s, m));
  follow(`/v1/tables/${encodeURIComponent(table)}/me/stream`, headers, onMine, (s, m) => status("mine", s, m));
  loadHistory();
}

async function init() {
  $("table").textContent = "Pok Deng · " + table;
  document.title = "Pok Deng · " + table;
  try {
    info = await (await fetch(`/v1/tables/${encodeURIComponent(table)}`)).json();
  } catch (error) {
    info = null;
  }
  if (!info || !info.page) {
    say("This table does not exist.", "refused", "not_found");
    return;
  }
  format = moneyFormat(info.currency);
  chip = info.page.chips[0];
  $("chips").replaceChildren(...info.page.chips.map((value) => {
    const button = el("button", { type: "button", class: "chip", role: "radio", "data-chip": value,
                                  "aria-checked": String(value === chip) }, format(value));
    button.addEventListener("click", () => {
      chip = value;
      for (const other of $("chips").children) other.setAttribute("aria-checked", String(other === button));
      renderSpots();
    });
    return button;
  }));
  const { min_stake: low, max_stake: high } = info.settings;
  $("limits").textContent = `Stake per bet ${format(low)}–${format(high)}. A bet holds 3 × its stake until the ` +
    "round settles. Bet on the player side or the banker side, never both in one round.";
  if (info.page.stream_url) {
    $("video").src = info.page.stream_url;
    $("video").hidden = false;
    $("placeholder").hidden = true;
  }
  $("place").addEventListener("click", placeBets);
  $("clear").addEventListener("click", () => { staged.clear(); slipKey = null; renderSpots(); });
  $("threshold").addEventListener("change", async (event) => {
    const response = await fetch("/v1/me/threshold", { method: "PUT", body: JSON.stringify({ threshold:
      Number(event.target.value) }), headers: { "Content-Type": "application/json", Authorization: "Bearer " + token } });
    say(response.ok ? "Threshold saved: it applies from the next round." : "The threshold was not saved.",
        response.ok ? "ok" : "refused");
  });
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN, token);
    start();
  });
  window.addEventListener("offline", () => { networkDown = true; status("", "offline", "offline"); });
  window.addEventListener("online", () => { networkDown = false; status("", "live", ""); });
  setInterval(() => {
    $("timer").textContent = secondsLeft(view);
    for (const countdown of document.querySelectorAll(".countdown")) countdown.textContent = secondsLeft(view);
    renderSpots(); // betting closes on the clock too
  }, 250);
  if (token) start(); else showLogin("");
}

init();
