// The player's page of a house coup table (baccarat, Dragon Tiger). It reads two streams: the table's public state
// (the coup's cards as they are dealt, phase, countdown, result, the shoe's roads) and the player's own (their wagers
// and net, their wallet). The spots, what each pays and the chips come from the table (``GET /v1/tables/{id}``);
// bets are one slip (``POST /v1/rounds/{id}/bets``) with an idempotency key kept for its retries.
"use strict";

const table = tableFromPath();
const TOKEN = "studio.coup.token";
const PHASES = { betting: "play.phase.betting", dealing: "play.phase.dealing", settled: "play.phase.settled",
                 void: "play.phase.void", verifying: "play.phase.verifying" };

let token = sessionStorage.getItem(TOKEN) || "";
let info = null; // the table: game, currency, settings, page (spots, sides, chips)
let view = {};
let mine = { you: {}, wallet: {} };
let chip = null;
const staged = new Map(); // spot -> stake not yet sent
let slipKey = null;
let sending = false;
let format = (amount) => String(amount);
let drawn = "";
let historyRound = "";

const $ = (id) => document.getElementById(id);

function current() {
  return mine.round_id && mine.round_id === view.round_id ? mine.you || {} : {};
}

function bettingOpen() {
  return view.phase === "betting" && (!view.window_closes_at || Date.parse(view.window_closes_at) > Date.now());
}

// What a spot pays at this table's settings: "1:1", "8:1", "1:1 less 5 %".
function pays(spot) {
  const s = info.settings;
  const odds = { tie: s.tie_pays, player_pair: s.pair_pays, banker_pair: s.pair_pays, suited_tie: s.suited_tie_pays };
  if (spot in odds) return t("coup.pays", { odds: odds[spot] + ":1" });
  if (spot === "banker" && s.super6) return t("coup.pays.super6");
  if (spot === "banker") return t("coup.pays.commission", { percent: s.banker_commission_bps / 100 });
  if (info.game === "dragontiger" && s.tie_half_back) return t("coup.pays.half_back");
  return t("coup.pays", { odds: "1:1" });
}

// The side of the two this player has bet on (placed or staged) this coup, if any: the other is closed to them.
function sideTaken() {
  const sides = info.page.sides;
  const placed = (current().wagers || []).find((wager) => sides.includes(wager.side));
  if (placed) return placed.side;
  return sides.find((side) => staged.has(side)) || null;
}

function renderSpots() {
  const wagers = current().wagers || [];
  const taken = sideTaken();
  const open = bettingOpen() && !sending;
  const from = JSON.stringify([wagers, [...staged], taken, open, chip, sending]);
  if (from === drawn) return;
  drawn = from;
  const { spots, sides } = info.page;
  const order = [...spots.filter((spot) => !sides.includes(spot)), ...sides]; // the side bets on top, the sides below
  $("spots").replaceChildren(...order.map((spot) => {
    const placed = wagers.filter((wager) => wager.side === spot).reduce((sum, wager) => sum + wager.stake, 0);
    const pending = staged.get(spot) || 0;
    const closed = sides.includes(spot) && taken && taken !== spot;
    const button = el("button", { type: "button", class: "spot " + spot + (sides.includes(spot) ? " main" : ""),
                                  "data-spot": spot, title: closed ? t("coup.one_side", { side: t("coup.side." + taken) }) : "" },
      el("span", { class: "label" }, t("coup.side." + spot)),
      el("span", { class: "pays" }, pays(spot)),
      el("span", { class: "stake" }, placed ? format(placed) : ""),
      el("span", { class: "staged" }, pending ? "+" + format(pending) : ""));
    button.disabled = !open || closed || !chip;
    button.addEventListener("click", () => stake(spot));
    return button;
  }));
  $("place").disabled = !open || staged.size === 0;
  $("place").textContent = t(sending ? "play.placing" : "play.place");
  $("clear").disabled = sending || staged.size === 0;
}

function stake(spot) {
  if (sending || !chip || !bettingOpen()) return;
  staged.set(spot, (staged.get(spot) || 0) + chip);
  slipKey = null; // a different slip: its own key when sent
  say("");
  renderSpots();
}

function betText(bet) {
  return t("coup.bet", { spot: t("coup.side." + bet.side), stake: format(bet.stake) });
}

async function placeBets() {
  if (sending || staged.size === 0 || !bettingOpen()) return; // a double click's second click stops here
  const round = view.round_id;
  const bets = [...staged].map(([side, amount]) => ({ side, stake: amount }));
  slipKey = slipKey || newKey();
  sending = true;
  renderSpots();
  try {
    const answer = await postJSON(`/v1/rounds/${encodeURIComponent(round)}/bets`, { bets }, token, slipKey,
                                  () => say(t("message.retrying"), "refused", "retrying"));
    if (mine.round_id === round) mine.you.wagers = withSlip(mine.you.wagers, answer);
    if (answer.balance !== null && answer.balance !== undefined) mine.wallet = { ...mine.wallet, balance: answer.balance };
    say(t("play.placed", { bets: bets.map(betText).join(", ") }), "ok", "placed");
  } catch (error) {
    if (error.status === 401) signedOut(TOKEN, t("login.again"));
    say(refusalText(error, format), "refused", error.code);
  }
  staged.clear();
  slipKey = null;
  sending = false;
  render();
}

function handsOf(state) {
  return el("div", { class: "hands" }, ...Object.entries(state.hands || {}).map(([position, hand]) =>
    el("div", { class: "hand", "data-position": position },
      el("div", { class: "name" }, t("coup.side." + position)),
      el("div", { class: "cards" }, ...hand.cards.map(cardNode)),
      el("div", { class: "points" }, info.game === "baccarat" && hand.cards.length
        ? t("coup.total", { total: hand.total }) : ""))));
}

function renderResult() {
  const box = $("result");
  const result = view.result;
  if (!result || view.phase !== "settled") {
    box.hidden = view.phase !== "void";
    box.replaceChildren(view.phase === "void" ? el("strong", {}, t("play.void")) : "");
    return;
  }
  const headline = result.winner === "tie" ? t("coup.result.tie") : t("coup.result.won", {
    side: t("coup.side." + result.winner) });
  const flags = ["natural", "player_pair", "banker_pair", "suited_tie"].filter((flag) => result[flag])
    .map((flag) => t("coup.flag." + flag));
  const children = [el("div", { class: "winner", "data-winner": result.winner }, headline)];
  if (flags.length) children.push(el("div", { class: "flags" }, flags.join(" · ")));
  const net = current().net;
  if (net !== null && net !== undefined) children.push(netNode(net, format));
  box.replaceChildren(...children);
  box.hidden = false;
}

function render() {
  showTable(view, PHASES, handsOf(view));
  showWallet(mine.wallet, format);
  renderSpots();
  renderResult();
  const roads = JSON.stringify(view.roads || {});
  if ($("roads").dataset.from !== roads) {
    $("roads").dataset.from = roads;
    $("roads").replaceChildren(roadsNode(view.roads || {}, info.page.sides));
  }
}

async function loadHistory() {
  const response = await fetch("/v1/history?limit=10", { headers: { Authorization: "Bearer " + token },
                                                         cache: "no-store" }).catch(() => null);
  if (!response || !response.ok) return;
  const rounds = await response.json();
  $("history").replaceChildren(...rounds.map((round) => historyItem(round, (round.wagers || []).map(betText).join(", "),
    (position) => t("coup.side." + position), format, PHASES)));
}

function refreshHistory() {
  if (view.phase !== "settled" && view.phase !== "void") return;
  const key = JSON.stringify([view.round_id, view.phase, view.result, current().net]);
  if (key === historyRound) return;
  historyRound = key;
  loadHistory();
}

const links = { public: "", mine: "" };

function status(which, state, message) {
  links[which] = state;
  const online = links.public === "live" && links.mine === "live";
  $("offline").hidden = online || (!links.public && !links.mine);
  $("status").textContent = online ? t("status.live") : state === "error" && message ? message
    : t("status.reconnecting");
  $("status").className = "status " + (online ? "live" : state);
  if (state === "error" && /token/.test(message)) signedOut(TOKEN, message);
}

function start() {
  $("login").hidden = true;
  $("game").hidden = false;
  const headers = { Authorization: "Bearer " + token };
  follow(`/v1/tables/${encodeURIComponent(table)}/state/stream`, {}, (value) => {
    if (value.round_id !== view.round_id) { staged.clear(); slipKey = null; say(""); }
    view = value;
    refreshHistory();
    render();
  }, (s, m) => status("public", s, m));
  follow(`/v1/tables/${encodeURIComponent(table)}/me/stream`, headers, (value) => {
    mine = value;
    refreshHistory();
    render();
  }, (s, m) => status("mine", s, m));
  loadHistory();
}

async function init() {
  info = await fetch(`/v1/tables/${encodeURIComponent(table)}`).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  if (!info || !info.page || !info.page.spots) {
    say(t("play.no_table"), "refused", "not_found");
    return;
  }
  $("table").textContent = gameName(info.game) + " · " + table;
  document.title = gameName(info.game) + " · " + table;
  format = moneyFormat(info.currency);
  chipPicker($("chips"), info.page.chips, format, (value) => { chip = value; renderSpots(); });
  $("limits").textContent = t("coup.limits", { low: format(info.page.limits.min_stake),
                                               high: format(info.page.limits.max_stake) });
  $("place").addEventListener("click", placeBets);
  $("clear").addEventListener("click", () => { staged.clear(); slipKey = null; renderSpots(); });
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN, token);
    start();
  });
  setInterval(() => { $("timer").textContent = secondsLeft(view); renderSpots(); }, 250);
  if (token) start(); else signedOut(TOKEN, "");
}

I18N.ready.then(init);
