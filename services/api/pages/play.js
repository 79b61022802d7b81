// The player's page of a live Pok Deng table. It reads two streams only: the table's public state (cards as
// they are revealed, phase, countdown, result) and the player's own (their wagers, the insurance they may buy,
// the draw/stand choice that is theirs, their net and wallet). Bets, insurance and decisions are API calls.
"use strict";

const table = tableFromPath();
const TOKEN = "studio.play.token";
const SEATS = ["A", "B", "C"];
const SIDES = ["player", "banker"];
// The words (i18n.json keys): Pok Deng's hand ranks (1 is best) and the phases (a refusal's: ``refusalText``).
const HAND_NAMES = { 2: "pokdeng.rank.2", 3: "pokdeng.rank.3", 4: "pokdeng.rank.4", 5: "pokdeng.rank.5" };
const PHASES = { betting: "play.phase.betting", dealing: "play.phase.dealing", insurance: "play.phase.insurance",
                 drawing: "play.phase.drawing", settled: "play.phase.settled", void: "play.phase.void",
                 verifying: "play.phase.verifying" };

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

async function post(path, body, key) {
  try {
    return await postJSON(path, body, token, key, () => say(t("message.retrying"), "refused", "retrying"));
  } catch (error) {
    if (error.status === 401) showLogin(t("login.again"));
    throw error;
  }
}

async function get(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  if (response.status === 401) showLogin(t("login.again"));
  if (!response.ok) throw new Error(response.status + "");
  return response.json();
}

function refused(error) {
  say(refusalText(error, format), "refused", error.code);
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

let drawn = { spots: "", prompt: "" }; // what each part was last drawn from: redrawn only when it changes

function renderSpots() {
  const wagers = current().wagers || [];
  const taken = sideTaken();
  const open = bettingOpen() && !sending;
  if (switching && (!open || staged.size === 0)) closeSwitch(); // betting closed, or nothing left to clear
  const from = JSON.stringify([wagers, [...staged], taken, open, chip, sending, mine.wallet]);
  if (from === drawn.spots) return;
  drawn.spots = from;
  $("spots").replaceChildren(...SIDES.flatMap((side) => SEATS.map((seat) => {
    const placed = wagers.filter((w) => w.side === side && w.seat === seat).reduce((sum, w) => sum + w.stake, 0);
    const pending = staged.get(side + ":" + seat) || 0;
    const other = taken && taken !== side;
    const locked = wagers.length > 0 && other; // placed on the other side: this round is theirs
    const spot = el("button", { type: "button", class: "spot " + side + (other ? " other" : ""), "data-side": side,
                                "data-seat": seat, title: locked ? t("play.one_side." + taken) : "" },
      el("span", { class: "label" }, t(side === "player" ? "play.spot.player" : "play.spot.banker", { seat })),
      el("span", { class: "stake" }, placed ? format(placed) : ""),
      el("span", { class: "staged" }, pending ? "+" + format(pending) : ""));
    spot.disabled = !open || locked || !chip;
    spot.addEventListener("click", () => stake(side, seat));
    return spot;
  })));
  $("place").disabled = !open || staged.size === 0;
  $("place").textContent = t(sending ? "play.placing" : "play.place");
  $("clear").disabled = sending || staged.size === 0;
}

let switching = null; // { side, seat }: a tap on the other side while chips are staged, waiting for the player's word

// Chips staged on one side and a tap on the other: one side per round, so ask before clearing them (never silently).
function askSwitch(side, seat) {
  switching = { side, seat };
  const yes = el("button", { type: "button", class: "primary", id: "switch-yes" }, t("play.switch_yes"));
  const no = el("button", { type: "button", id: "switch-no" }, t("play.switch_no"));
  yes.addEventListener("click", () => {
    const to = switching;
    staged.clear();
    slipKey = null;
    closeSwitch();
    if (to) stake(to.side, to.seat); // (refused if betting closed meanwhile: the spots are drawn anyway)
    renderSpots();
  });
  no.addEventListener("click", closeSwitch);
  $("switch").replaceChildren(el("p", {}, t("play.switch." + side)), el("div", { class: "row" }, yes, no));
  $("switch").hidden = false;
  no.focus();
}

function closeSwitch() {
  switching = null;
  $("switch").hidden = true;
  $("switch").replaceChildren();
}

function stake(side, seat) {
  if (sending || !chip || !bettingOpen()) return;
  const taken = sideTaken();
  if (taken && taken !== side) {
    if (!(current().wagers || []).length) askSwitch(side, seat); // only staged chips there: they may move
    return;
  }
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
    if (mine.round_id === round) mine.you.wagers = withSlip(mine.you.wagers, answer);
    say(t("play.placed", { bets: bets.map(betText).join(", ") }), "ok", "placed");
  } catch (error) {
    refused(error);
  }
  staged.clear();
  slipKey = null;
  sending = false;
  render();
}

// A bet as the player reads it: "player A ฿100.00".
function betText(bet) {
  return t("play.bet." + bet.side, { seat: bet.seat, stake: format(bet.stake) });
}

function renderPrompt() {
  const you = current();
  const prompt = $("prompt");
  const from = JSON.stringify([view.round_id, view.phase, you.decision, you.insurance_offer, you.outweighed, busy]);
  if (from === drawn.prompt) return;
  drawn.prompt = from;
  const closes = el("span", { class: "countdown" }, secondsLeft(view));
  if (you.decision && view.phase === "drawing") {
    const { seat, points, threshold } = you.decision;
    prompt.dataset.kind = "decision";
    prompt.replaceChildren(
      el("strong", {}, t("play.decision", { seat, points })),
      el("div", { class: "hint" }, ...I18N.nodes(points <= threshold ? "play.auto.draws" : "play.auto.stands",
                                                  { closes, threshold })),
      el("div", { class: "row" }, choiceButton(seat, "draw", t("play.draw")),
         choiceButton(seat, "stand", t("play.stand"))));
    prompt.hidden = false;
    return;
  }
  if ((you.insurance_offer || []).length && view.phase === "insurance") {
    prompt.dataset.kind = "insurance";
    const buttons = you.insurance_offer.map((amount) => {
      const button = el("button", { type: "button", "data-amount": amount },
                        t("play.insure", { amount: format(amount) }));
      button.disabled = busy;
      button.addEventListener("click", () => insure(amount));
      return button;
    });
    prompt.replaceChildren(
      el("strong", {}, t("play.insurance", { card: ((view.hands.banker || {}).cards || [])[0] })),
      el("div", { class: "hint" }, ...I18N.nodes("play.insurance_hint", { closes })),
      el("div", { class: "row" }, ...buttons));
    prompt.hidden = false;
    return;
  }
  const outweighed = view.phase === "drawing" ? you.outweighed || [] : [];
  if (outweighed.length) { // their seat, but the banker side staked more: the table's threshold decides it, said so
    prompt.dataset.kind = "outweighed";
    prompt.replaceChildren(el("div", { class: "hint" },
      t("play.outweighed", { seats: outweighed.join(", "), threshold: info.settings.default_threshold })));
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
    say(t("play.insured", { amount: format(amount) }), "ok", "insured");
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
    say(t("play.decided." + choice, { seat }), "ok", "decided");
  } catch (error) {
    refused(error);
  }
  busy = false;
  render();
}

function handName(hand) {
  if (hand.rank === 1) return t("pokdeng.pok", { points: hand.points });
  return HAND_NAMES[hand.rank] ? t(HAND_NAMES[hand.rank]) : t("pokdeng.points", { points: hand.points });
}

function renderResult() {
  const box = $("result");
  const result = view.result;
  if (!result || view.phase !== "settled") {
    box.hidden = view.phase !== "void";
    box.replaceChildren(view.phase === "void" ? el("strong", {}, t("play.void")) : "");
    return;
  }
  const outcomes = result.outcomes || {};
  const lines = Object.entries(result.hands).map(([position, hand]) => {
    const outcome = ["seat", "banker", "tie"].includes(outcomes[position]) ? t("play.outcome." + outcomes[position])
      : "";
    return el("div", { class: "hand-line", "data-position": position },
      el("strong", {}, positionName(position)),
      el("span", { class: "cards" }, ...hand.cards.map(cardNode)),
      el("span", { class: "name" }, `${handName(hand)} ×${hand.multiplier}`),
      el("span", { class: "outcome" }, outcome));
  });
  const net = current().net;
  const children = [el("h2", {}, t("play.result")), ...lines];
  if (net !== null && net !== undefined) children.push(netNode(net, format));
  box.replaceChildren(...children);
  box.hidden = false;
}

function render() {
  showTable(view, PHASES, handsNode(view));
  showWallet(mine.wallet, format);
  renderSpots();
  renderPrompt();
  renderResult();
}

async function loadHistory() {
  const rounds = await get("/v1/history?limit=10").catch(() => null);
  if (!rounds) return;
  const name = (position) => (position === "banker" ? t("hand.banker") : position);
  $("history").replaceChildren(...rounds.map((round) =>
    historyItem(round, round.wagers.map(betText).join(", "), name, format, PHASES)));
}

// ---- streams and start-up ------------------------------------------------------------------

const links = { public: "", mine: "" };
let networkDown = false;

function status(which, state, message) {
  if (which) links[which] = state;
  const online = links.public === "live" && links.mine === "live" && !networkDown;
  $("offline").hidden = online || (!links.public && !links.mine);
  $("status").textContent = online ? t("status.live") : networkDown ? t("status.offline")
    : state === "error" && message ? message : t("status.reconnecting"); // the server's words as it wrote them
  $("status").title = online ? "" : message || "";
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
    showLogin(t("login.refused"));
    return;
  }
  const headers = { Authorization: "Bearer " + token };
  follow(`/v1/tables/${encodeURIComponent(table)}/state/stream`, {}, onPublic, (s, m) => status("public", s, m));
  follow(`/v1/tables/${encodeURIComponent(table)}/me/stream`, headers, onMine, (s, m) => status("mine", s, m));
  loadHistory();
}

async function init() {
  $("table").textContent = t("game.pokdeng") + " · " + table;
  document.title = t("game.pokdeng") + " · " + table;
  try {
    info = await (await fetch(`/v1/tables/${encodeURIComponent(table)}`)).json();
  } catch (error) {
    info = null;
  }
  if (!info || !info.page) {
    say(t("play.no_table"), "refused", "not_found");
    return;
  }
  format = moneyFormat(info.currency);
  chipPicker($("chips"), info.page.chips, format, (value) => { chip = value; renderSpots(); });
  const { min_stake: low, max_stake: high, hold_multiple: hold, commission_bps: bps } = info.settings;
  $("limits").textContent = t("play.limits", { low: format(low), high: format(high), hold });
  const win = bps ? t("play.pays.win", { percent: I18N.number(bps / 100) }) : t("play.pays.win_free");
  $("pays").querySelector("ul").replaceChildren(
    ...[win, t("play.pays.lose"), t("play.pays.tie"), t("play.pays.deng")].map((line) => el("li", {}, line)));
  if (info.page.stream_url) {
    playStream($("video"), info.page.stream_url);
    $("video").hidden = false;
    $("placeholder").hidden = true;
  }
  $("place").addEventListener("click", placeBets);
  $("clear").addEventListener("click", () => { staged.clear(); slipKey = null; renderSpots(); });
  $("threshold").addEventListener("change", async (event) => {
    const response = await fetch("/v1/me/threshold", { method: "PUT", body: JSON.stringify({ threshold:
      Number(event.target.value) }), headers: { "Content-Type": "application/json", Authorization: "Bearer " + token } });
    say(t(response.ok ? "play.threshold_saved" : "play.threshold_failed"), response.ok ? "ok" : "refused");
  });
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN, token);
    start();
  });
  window.addEventListener("offline", () => { networkDown = true; status("", "offline", ""); });
  window.addEventListener("online", () => { networkDown = false; status("", "live", ""); });
  setInterval(() => {
    $("timer").textContent = secondsLeft(view);
    for (const countdown of document.querySelectorAll(".countdown")) countdown.textContent = secondsLeft(view);
    renderSpots(); // betting closes on the clock too
  }, 250);
  if (token) start(); else showLogin("");
}

I18N.ready.then(init);
