// The operator's page: rounds by table, state and time; a round in full (cards, shoe journal with evidence and video
// links, wagers, money); void; corrections from the video with a preview; four eyes on a settled round's money.
"use strict";

const KEY = "studio.ops.token";
const $ = (id) => document.getElementById(id);
let token = "";
let me = "";
let role = ""; // operator | admin
let tables = {}; // table id -> {currency, video_url_template, …}
let current = null; // the round shown in full
const tableOf = {}; // round id -> table id, for the rounds listed or shown
let previewed = null; // the corrections the last successful preview was for (JSON), or null

// One call of the operator API; rejects with {code, message, reason, params, status}.
async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, cache: "no-store",
                                   body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw { code: "offline", message: t("error.unreachable"), status: 0 };
  }
  const answer = await response.json().catch(() => ({}));
  if (response.ok) return answer;
  if (response.status === 401) signOut(answer.message);
  throw { code: answer.code || String(response.status), message: answer.message || response.statusText,
          reason: answer.reason || "", params: answer.params || {}, status: response.status };
}

function say(text, ok) {
  const node = $("action-message");
  node.replaceChildren(...(typeof text === "string" ? [text] : text));
  node.className = "message " + (ok ? "ok" : "error");
}

// A refusal as the operator reads it: the sentence in the page's language (``refusalText``); where the pages have
// no words for its exact reason, the server's own detail under it (English, the round's and proposal's numbers).
function refused(error) {
  const nodes = [refusalText(error)];
  const exact = error.reason && I18N.has("refusal.reason." + error.reason);
  if (!exact && error.message && error.status) nodes.push(el("small", { class: "detail", lang: "en" }, error.message));
  return nodes;
}

function when(iso) {
  return I18N.dateTime(iso);
}

// A word the API answers with ("settled", "applied", "burn") in the page's language, under ``group`` in i18n.json
// (the word itself where there is none).
function word(group, value) {
  return I18N.has(group + "." + value) ? t(group + "." + value) : value;
}

// Minor units in the table's currency (as minor units where the table is not known here).
function money(amount, currency) {
  if (amount === null || amount === undefined) return "";
  return currency ? moneyFormat(currency)(amount) : t("ops.minor_units", { amount: I18N.number(amount) });
}

function percent(value, digits) {
  return I18N.number(value * 100, digits) + " %";
}

function signed(amount, currency) {
  const text = money(amount, currency);
  return el("span", { class: amount < 0 ? "minus" : amount > 0 ? "plus" : "" }, amount > 0 ? "+" + text : text);
}

function row(...cells) {
  return el("tr", {}, ...cells.map((cell) => el("td", {}, cell === null || cell === undefined ? "" : cell)));
}

// ---- the rounds list -------------------------------------------------------------------------------------------

function returnNode(bet) {
  if (!bet) return "—";
  const [low, high] = bet.ci95;
  const text = low === high ? percent(bet.rtp, 4)
    : `${percent(bet.rtp, 2)} (${I18N.number(low * 100, 2)}–${I18N.number(high * 100, 2)})`;
  return el("span", { class: high >= 1 ? "minus" : "" }, text);
}

async function loadTables() {
  const list = await api("GET", "/v1/operator/tables");
  tables = Object.fromEntries(list.map((table) => [table.table_id, table]));
  $("tables").replaceChildren(...list.map((table) => {
    const bets = (table.returns || {}).bets || {};
    const tr = row(table.table_id, gameName(table.game),
      table.settings.commission_bps === undefined ? "" : percent(table.settings.commission_bps / 10_000, 2),
      table.returns ? returnNode(bets.player) : t("ops.players_each_other"), returnNode(bets.banker),
      returnNode(bets.insurance), returnNode(bets["group on one seat"]),
      table.allow_return_over_100 ? el("strong", { class: "minus" }, t("ops.allowed")) : "");
    tr.dataset.table = table.table_id;
    return tr;
  }));
  const select = $("filter-table");
  select.replaceChildren(el("option", { value: "", "data-i18n": "ops.any" }, t("ops.any")),
    ...list.map((table) => el("option", { value: table.table_id }, table.table_id + " · " + gameName(table.game))));
}

async function loadRounds() {
  const query = new URLSearchParams({ limit: "100" });
  if ($("filter-table").value) query.set("table", $("filter-table").value);
  if ($("filter-state").value) query.set("state", $("filter-state").value);
  if ($("filter-since").value) query.set("since", new Date($("filter-since").value).toISOString());
  const rounds = await api("GET", "/v1/operator/rounds?" + query);
  for (const round of rounds) tableOf[round.round_id] = round.table_id;
  $("rounds").replaceChildren(...rounds.map((round) => {
    const tr = el("tr", { class: "pick" + (current && current.round_id === round.round_id ? " chosen" : ""),
                          "data-round": round.round_id },
      el("td", {}, round.round_id), el("td", {}, round.table_id), el("td", {}, String(round.number)),
      el("td", {}, el("span", { class: "state " + round.state }, word("state", round.state))),
      el("td", {}, when(round.opened_at)));
    tr.addEventListener("click", () => { location.hash = "round=" + encodeURIComponent(round.round_id); });
    return tr;
  }));
}

// ---- one round in full -----------------------------------------------------------------------------------------

async function showRound(roundId) {
  const [record, proposals] = await Promise.all([
    api("GET", "/v1/operator/rounds/" + encodeURIComponent(roundId)),
    api("GET", "/v1/operator/proposals?round_id=" + encodeURIComponent(roundId)),
  ]);
  if (!current || current.round_id !== record.round_id) stopRecording(); // another round: not the last one's video
  current = record;
  tableOf[record.round_id] = record.table_id;
  previewed = null;
  const currency = (tables[record.table_id] || {}).currency;
  $("detail").hidden = false;
  document.body.dataset.round = record.round_id;
  document.body.dataset.state = record.state;
  $("d-round").textContent = record.round_id;
  $("d-state").textContent = word("state", record.state);
  $("d-state").className = "state " + record.state;
  $("d-facts").replaceChildren(
    el("span", {}, t("ops.fact.round", { table: record.table_id, number: record.number })),
    el("span", {}, t("ops.fact.opened", { at: when(record.opened_at) })),
    el("span", {}, record.settled_at ? t("ops.fact.settled", { at: when(record.settled_at) }) : ""),
    el("span", {}, record.voided_at ? t("ops.fact.void", { at: when(record.voided_at) }) : ""),
    el("span", {}, record.video_ref ? t("ops.fact.recording", { ref: record.video_ref }) : ""));
  $("d-video").replaceChildren(record.video_url
    ? el("a", { href: record.video_url, target: "_blank", rel: "noopener", id: "video-link" }, t("ops.watch"))
    : "");
  const hands = {};
  for (const card of record.cards) {
    if (!card.position) continue;
    (hands[card.position] = hands[card.position] || { cards: [] }).cards.push(card.card);
  }
  $("d-hands").replaceChildren(handsNode({ hands, result: record.result }));

  const correctable = record.state === "settled" || record.state === "corrected";
  const dealtAt = record.dealt_at || [];
  $("d-cards").replaceChildren(...record.cards.map((card) => row(
    String(card.index), card.position || "",
    el("span", {}, card.card === null ? cardNode(null) : cardNode(card.card), " ",
       dealtAt[card.index] ? momentButton(record.table_id, dealtAt[card.index]) : ""),
    correctable ? el("input", { "data-index": String(card.index), maxlength: "2", "aria-label":
                                t("ops.card_input", { index: card.index }) }) : "")));
  for (const input of document.querySelectorAll("#d-cards input")) {
    input.addEventListener("input", () => { previewed = null; $("propose-correction").disabled = true; });
  }
  $("correct-hint").hidden = !correctable;
  $("correct-box").hidden = !correctable;
  $("void-box").hidden = record.state === "void";
  $("card-box").hidden = record.state !== "open" || !(tables[record.table_id] || {}).manual_cards;
  $("void").dataset.i18n = record.state === "open" ? "ops.void_open" : "ops.void_propose";
  $("void").textContent = t($("void").dataset.i18n);
  $("preview-out").replaceChildren();
  $("propose-correction").disabled = true;
  say("", true);

  $("d-shoe").replaceChildren(...record.shoe.map((entry) => row(
    String(entry.seq), I18N.time(entry.received_at),
    entry.card ? cardNode(entry.card) : entry.kind === "new_deck" ? t("ops.new_deck") : cardNode(null),
    word("shoe", entry.disposition) + (entry.burn ? " " + t("ops.burn") : "")
      + (entry.reason ? " — " + entry.reason : ""),
    entry.source, entry.confidence === null ? "" : I18N.number(entry.confidence, 3),
    evidenceNode(entry),
    el("span", {}, entry.video_url ? el("a", { href: entry.video_url, target: "_blank", rel: "noopener" }, entry.video_tc)
                                   : entry.video_tc, " ", momentButton(record.table_id, entry.received_at)))));
  $("d-wagers").replaceChildren(...record.wagers.map((wager) => row(
    wager.player, word("side", wager.side), wager.seat, money(wager.stake, currency),
    wager.net === null ? "" : record.state === "void"
      ? el("span", {}, ...I18N.nodes("ops.void_reversed", { net: signed(wager.net, currency) }))
      : signed(wager.net, currency))));
  $("d-money").replaceChildren(...record.money.map((move) => row(
    String(move.id), move.kind, money(move.amount, move.currency),
    move.from.account + (move.from.owner ? " " + move.from.owner : ""),
    move.to.account + (move.to.owner ? " " + move.to.owner : ""), move.memo, when(move.at))));
  $("d-wallet-box").hidden = !record.wallet_calls.length;
  $("d-wallet").replaceChildren(...record.wallet_calls.map((call) => row(
    call.transaction_id, `${call.purpose} · ${call.kind}`, call.player, money(call.amount, currency),
    call.status === "pending" ? t("ops.wallet_pending") + (call.last_error ? " — " + call.last_error : "")
      : call.status === "refused" ? t("ops.wallet_refused", { code: call.answer?.code || "" })
      : t("ops.wallet_ok", { reference: call.answer?.operator_reference || "" }),
    String(call.attempts))));
  $("d-checks-box").hidden = !record.checks.length;
  $("d-checks").replaceChildren(...record.checks.map((check) => checkNode(record.round_id, check)));
  $("d-proposals").replaceChildren(...proposals.map((proposal) => proposalNode(proposal, false)));
  $("d-log").replaceChildren(...record.log.map((entry) =>
    el("li", {}, `${when(entry.at)} · ${entry.actor} · ${JSON.stringify(entry.command)}`)));
  for (const tr of document.querySelectorAll("#rounds tr")) {
    tr.classList.toggle("chosen", tr.dataset.round === record.round_id);
  }
}

// ---- the table camera's recording (``studio record``), played at a card's moment ----

let recording = null; // the hls.js player of the recording shown
let playing = 0; // which ▶ was pressed last: an earlier one's answer arriving later is dropped
let clip = ""; // the clip's reference this page put in the correction's video reference (not one typed)

// Another round shown: no recording of the last one plays, and no clip of it stays in the correction.
function stopRecording() {
  playing += 1;
  if (recording) recording.destroy();
  recording = null;
  $("recording").removeAttribute("src");
  $("d-player").hidden = true;
  if ($("video-ref").value === clip) $("video-ref").value = "";
  clip = "";
}

// ▶ beside a card dealt or journaled ``at``: the table camera's recording at that moment.
function momentButton(table, at) {
  const button = el("button", { type: "button", class: "moment", "data-moment": at, title: t("ops.play_moment"),
                                "aria-label": t("ops.play_moment") }, "▶");
  button.addEventListener("click", () => playMoment(table, at));
  return button;
}

// Plays the table's recording from a little before ``at``, above the cards; a correction proposed now carries the
// clip's reference (unless one was typed).
async function playMoment(table, at) {
  const press = ++playing;
  try {
    const found = await api("GET", `/v1/operator/tables/${encodeURIComponent(table)}/recording?at=`
                            + encodeURIComponent(at));
    if (press !== playing) return; // another ▶ (or another round) since
    if (recording) recording.destroy();
    recording = null;
    $("d-player").hidden = false;
    const video = $("recording");
    video.dataset.position = String(found.position_s);
    const player = await playStream(video, found.playlist, {
      headers: { Authorization: "Bearer " + token }, start: found.position_s,
      onFail: () => say(t("ops.recording_failed"), false),
    });
    if (press !== playing) {
      if (player) player.destroy();
      return;
    }
    recording = player;
    $("recording-at").textContent = t("ops.recording_at", { time: when(at), timecode: found.timecode });
    const typed = $("video-ref").value.trim();
    if (!typed || typed === clip) $("video-ref").value = clip = found.clip;
  } catch (error) {
    say(refused(error), false);
  }
}

// A shoe message's evidence: the device's raw bytes, and a camera card's crop as read (fetched with the token).
function evidenceNode(entry) {
  const node = el("span", { class: "evidence" }, entry.raw === null ? "" : el("code", {}, entry.raw));
  if (entry.crop_url) {
    const image = el("img", { class: "crop", alt: t("ops.crop_alt"), "data-crop": entry.crop_url });
    node.append(image);
    fetch(entry.crop_url, { headers: { Authorization: "Bearer " + token }, cache: "no-store" })
      .then((response) => (response.ok ? response.blob() : null))
      .then((blob) => { if (blob) image.src = URL.createObjectURL(blob); })
      .catch(() => {});
  }
  return node;
}

// A card checked against the overhead camera: both reads (the camera's crop), and for a disputed one the
// operator's word — which read is right, and what the video shows.
function checkNode(roundId, check) {
  const camera = el("span", { class: "evidence" }, check.camera_card ? cardNode(check.camera_card) : "—");
  if (check.crop_url) camera.append(evidenceNode({ raw: null, crop_url: check.crop_url }));
  const status = el("div", {}, word("check", check.status));
  if (check.confirmed_by) {
    status.append(el("div", {}, t("ops.confirmed_by", { read: t(check.confirmed_read === "camera"
      ? "ops.camera_right" : "ops.shoe_right"), by: check.confirmed_by, why: check.confirmed_why })));
  }
  if (check.status === "mismatch" || check.status === "unseen") {
    const reason = el("input", { placeholder: t("ops.check_reason"), class: "check-reason" });
    const message = el("span", { class: "message" });
    const decide = async (read) => {
      if (!reason.value.trim()) {
        message.textContent = t("ops.need_check_reason");
        message.className = "message error";
        return;
      }
      try {
        await api("POST", `/v1/operator/rounds/${encodeURIComponent(roundId)}/checks/${check.position}/confirm`,
                  { read, reason: reason.value.trim() });
        await showRound(roundId);
      } catch (error) {
        message.replaceChildren(...refused(error));
        message.className = "message error";
      }
    };
    const shoe = el("button", { type: "button", class: "confirm-shoe" }, t("ops.shoe_right"));
    shoe.addEventListener("click", () => decide("shoe"));
    const buttons = [shoe];
    if (check.camera_card) {
      const cameraRight = el("button", { type: "button", class: "confirm-camera" }, t("ops.camera_right"));
      cameraRight.addEventListener("click", () => decide("camera"));
      buttons.push(cameraRight);
    }
    status.append(el("div", { class: "decide" }, reason, ...buttons, message));
  }
  return el("tr", { "data-check": String(check.position) },
    el("td", {}, String(check.position)), el("td", {}, cardNode(check.card)), el("td", {}, camera),
    el("td", {}, status));
}

function corrections() {
  const cards = {};
  for (const input of document.querySelectorAll("#d-cards input")) {
    const code = input.value.trim().toUpperCase();
    if (code) cards[input.dataset.index] = code;
  }
  return cards;
}

function adjustmentsNode(preview, currency) {
  const players = Object.entries(preview.players || {});
  if (!players.length) return el("p", { class: "empty" }, t("ops.no_changes"));
  const heads = ["ops.col.player", "ops.col.net_before", "ops.col.net_after", "ops.col.adjustment"];
  return el("table", { class: "grid adjustments" },
    el("thead", {}, el("tr", {}, ...heads.map((key) => el("th", {}, t(key))))),
    el("tbody", {}, ...players.map(([player, change]) => {
      const tr = row(player, signed(change.before, currency), signed(change.after, currency),
                     signed(change.adjustment, currency));
      tr.dataset.player = player;
      tr.dataset.adjustment = String(change.adjustment);
      return tr;
    })));
}

async function preview() {
  const cards = corrections();
  const out = $("preview-out");
  $("propose-correction").disabled = true;
  if (!Object.keys(cards).length) {
    out.replaceChildren(el("p", { class: "error" }, t("ops.no_cards")));
    return;
  }
  try {
    const answer = await api("POST", `/v1/operator/rounds/${encodeURIComponent(current.round_id)}/preview`, { cards });
    previewed = JSON.stringify(cards);
    const outcomes = (result) => Object.entries((result && result.outcomes) || {})
      .map(([seat, outcome]) => seat + ": " + word("result", outcome)).join(", ");
    out.replaceChildren(
      el("p", {}, t("ops.before", { outcomes: outcomes(answer.result_before) })),
      el("p", {}, t("ops.after", { outcomes: outcomes(answer.result_after) })),
      adjustmentsNode(answer, (tables[current.table_id] || {}).currency));
    out.dataset.state = "ok";
    $("propose-correction").disabled = false;
  } catch (error) {
    // A correction that changes who draws, insurance or early settlement cannot be recomputed: only a void can.
    out.replaceChildren(el("div", { class: "refused" }, el("p", {}, ...refused(error))));
    out.dataset.state = error.code;
  }
}

async function proposeCorrection() {
  const cards = corrections();
  if (previewed !== JSON.stringify(cards)) {
    say(t("ops.preview_again"), false);
    return;
  }
  const video_ref = $("video-ref").value.trim();
  if (!video_ref) {
    say(t("ops.need_video"), false);
    return;
  }
  try {
    const proposal = await api("POST", "/v1/operator/proposals",
                               { action: "correct", round_id: current.round_id, cards, video_ref });
    await showRound(current.round_id);
    say(t("ops.correction_proposed", { id: proposal.id }), true);
    await loadProposals();
  } catch (error) {
    say(refused(error), false);
  }
}

// A card the shoe could not read, as the live round's next: dealt once a second operator approves.
async function proposeCard() {
  const card = $("hand-card").value.trim().toUpperCase();
  const reason = $("hand-reason").value.trim();
  if (!/^[A2-9TJQK][SHDC]$/.test(card)) {
    say(t("ops.need_card"), false);
    return;
  }
  if (!reason) {
    say(t("ops.need_card_reason"), false);
    return;
  }
  try {
    const proposal = await api("POST", "/v1/operator/proposals", { action: "card", round_id: current.round_id, card,
                                                                   reason });
    $("hand-card").value = "";
    $("hand-reason").value = "";
    say(t("ops.card_proposed", { id: proposal.id }), true);
    await loadProposals();
  } catch (error) {
    say(refused(error), false);
  }
}

async function voidRound() {
  const reason = $("void-reason").value.trim();
  if (!reason) {
    say(t("ops.need_void_reason"), false);
    return;
  }
  const roundId = current.round_id;
  try {
    if (current.state === "open") {
      await api("POST", `/v1/operator/rounds/${encodeURIComponent(roundId)}/void`, { reason });
      await showRound(roundId);
      say(t("ops.voided"), true);
    } else {
      const proposal = await api("POST", "/v1/operator/proposals", { action: "void", round_id: roundId, reason });
      await showRound(roundId);
      say(t("ops.void_proposed", { id: proposal.id }), true);
    }
    await Promise.all([loadRounds(), loadProposals()]);
  } catch (error) {
    say(refused(error), false);
  }
}

// ---- proposals -------------------------------------------------------------------------------------------------

function proposalText(proposal) {
  const details = proposal.details;
  if (proposal.action === "void") return t("ops.proposal.void", { reason: details.reason });
  if (proposal.action === "card") {
    return t("ops.proposal.card", { card: cardText(details.card), index: details.index + 1, position: details.position,
                                    reason: details.reason });
  }
  return t("ops.proposal.correct", { cards: Object.entries(details.cards)
    .map(([index, code]) => `#${index} → ${code}`).join(", "), video: details.video_ref });
}

function proposalNode(proposal, decidable) {
  const details = proposalText(proposal);
  const { proposed, decided } = proposal;
  const status = word("proposal", proposal.status);
  const item = el("li", { "data-proposal": String(proposal.id), "data-status": proposal.status },
    el("div", {}, el("strong", {}, `#${proposal.id} `), el("a", { href: "#round=" + proposal.round_id },
      t("ops.proposal.round", { round: proposal.round_id })), " · " + details),
    el("div", { class: "hint" }, t("ops.proposal.proposed", { by: proposed.by, from: proposed.from,
                                                              at: when(proposed.at) })
      + " · " + (decided ? t("ops.proposal.decided", { status, by: decided.by, from: decided.from,
                                                        at: when(decided.at) })
      + (decided.reason ? " — " + decided.reason : "") : status)));
  item.append(adjustmentsNode(proposal.preview, (tables[tableOf[proposal.round_id]] || {}).currency));
  if (decidable) {
    const reason = el("input", { placeholder: t("ops.reject_reason"), class: "reject-reason" });
    const message = el("span", { class: "message" });
    const approve = el("button", { type: "button", class: "approve" }, t("ops.approve"));
    const reject = el("button", { type: "button", class: "reject" }, t("ops.reject"));
    const decide = async (path, body) => {
      try {
        const decided = await api("POST", `/v1/operator/proposals/${proposal.id}/${path}`, body);
        message.textContent = word("proposal", decided.status);
        message.className = "message ok";
        // the item leaves the list with the reload: what was decided stays said above it, with the round to open
        $("decided").replaceChildren(...I18N.nodes("ops.decided_said", {
          id: String(proposal.id), status: word("proposal", decided.status),
          round: el("a", { href: "#round=" + proposal.round_id }, proposal.round_id) }));
        $("decided").dataset.proposal = String(proposal.id);
        $("decided").hidden = false;
        await Promise.all([loadProposals(), loadRounds()]);
        if (current && current.round_id === proposal.round_id) await showRound(proposal.round_id);
      } catch (error) {
        message.replaceChildren(...refused(error));
        message.className = "message error";
      }
    };
    if (proposal.proposed.by === me) approve.disabled = true;
    approve.title = proposal.proposed.by === me ? t("ops.own_proposal") : "";
    approve.addEventListener("click", () => decide("approve"));
    reject.addEventListener("click", () => {
      if (!reason.value.trim()) {
        message.textContent = t("ops.need_reject_reason");
        message.className = "message error";
        return;
      }
      decide("reject", { reason: reason.value.trim() });
    });
    item.append(el("div", { class: "decide" }, approve, reason, reject, message));
  }
  return item;
}

async function loadProposals() {
  const pending = await api("GET", "/v1/operator/proposals?status=pending");
  $("pending-empty").hidden = pending.length > 0;
  $("proposals").replaceChildren(...pending.map((proposal) => proposalNode(proposal, true)));
}

// ---- deck reports ----------------------------------------------------------------------------------------------

function heldDeckNode(report) {
  const note = el("input", { placeholder: t("ops.deck_note"), class: "deck-note" });
  const message = el("span", { class: "message" });
  const button = el("button", { type: "button", class: "acknowledge" }, t("ops.acknowledge"));
  button.addEventListener("click", async () => {
    if (!note.value.trim()) {
      message.textContent = t("ops.need_deck_note");
      message.className = "message error";
      return;
    }
    try {
      await api("POST", `/v1/operator/decks/${report.id}/acknowledge`, { note: note.value.trim() });
      await loadDecks();
    } catch (error) {
      message.replaceChildren(...refused(error));
      message.className = "message error";
    }
  });
  return el("li", { "data-deck": String(report.id) },
    el("div", {}, el("strong", {}, t("ops.deck.title", { id: report.id, table: report.table_id })),
      " · " + t("ops.deck.ended", { at: when(report.at), seen: report.seen })),
    el("div", {}, deckProblems(report)),
    el("div", { class: "decide" }, note, button, message));
}

function deckProblems(report) {
  if (report.missing === null) { // the round dealt when the deck ended is still dealt: counts only
    return t("ops.deck.counts", { missing: report.missing_count, doubled: report.doubled_count });
  }
  const parts = [];
  const named = (code) => (code ? cardText(code) : t("ops.deck.a_face_down"));
  if (report.missing.length) parts.push(t("ops.deck.missing", { cards: report.missing.map(named).join(" ") }));
  if (report.doubled.length) {
    const cards = report.doubled.map((code) => (code ? cardText(code) : t("ops.deck.a_face_down"))).join(" ");
    parts.push(t("ops.deck.doubled", { cards }));
  }
  return parts.join(" · ") || t("ops.deck.whole");
}

async function loadDecks() {
  const [held, recent] = await Promise.all([
    api("GET", "/v1/operator/decks?status=held"), api("GET", "/v1/operator/decks?limit=20"),
  ]);
  $("decks-empty").hidden = held.length > 0;
  $("held-decks").replaceChildren(...held.map(heldDeckNode));
  $("deck-reports").replaceChildren(...recent.map((report) => row(
    String(report.id), report.table_id, when(report.at), String(report.seen),
    report.missing === null ? String(report.missing_count)
      : report.missing.map((c) => (c ? cardText(c) : t("card.face_down"))).join(" "),
    report.doubled === null ? String(report.doubled_count)
      : report.doubled.map((c) => (c ? cardText(c) : t("card.face_down"))).join(" "),
    word("deck", report.status) + (report.acknowledged
      ? " " + t("ops.deck.by", { by: report.acknowledged.by, note: report.acknowledged.note }) : ""))));
}

// ---- the staff log ---------------------------------------------------------------------------------------------

// What an event's detail says: the account's role, the table, or what was refused and why (``METHOD PATH: code: why``;
// the code in the page's language where the dictionary has it, the server's words otherwise).
function staffDetail(event) {
  if (event.action === "account_created" || event.action === "token_reissued") {
    return t("ops.staff.role", { role: word("role", event.detail) });
  }
  if (event.action === "table_assigned" || event.action === "table_unassigned") {
    return t("ops.staff.table", { table: event.detail });
  }
  if (event.action === "account_confirmed") return t("ops.staff.issued_by", { by: event.detail });
  if (event.action === "table_created" || event.action === "table_changed") {
    return t("ops.staff.settings", { settings: event.detail });
  }
  const [tried, code, ...why] = event.detail.split(": ");
  const reason = I18N.has("refusal." + code) ? t("refusal." + code) : why.join(": ") || code;
  return t("ops.staff.refused", { tried, reason });
}

// The staff log is read while its section is open (an admin's page opens it): nobody pays for what nobody reads.
async function loadStaffLog() {
  if (!$("staff-details").open) return;
  const events = await api("GET", "/v1/operator/staff-log?limit=100");
  $("staff-log").replaceChildren(...events.map((event) => {
    const tr = row(when(event.at), `${event.actor} (${word("role", event.actor_role)})`, word("staff", event.action),
      event.subject, staffDetail(event), event.address);
    tr.dataset.action = event.action;
    if (event.action === "refused") tr.className = "refused";
    return tr;
  }));
}

// An admin's page: the operators and admins whose token an admin issued, each waiting for a second admin's word.
async function loadUnconfirmed() {
  const waiting = (await api("GET", "/v1/operator/staff")).filter((account) => account.awaiting_confirmation);
  $("unconfirmed-box").hidden = false;
  $("unconfirmed-empty").hidden = waiting.length > 0;
  $("unconfirmed").replaceChildren(...waiting.map((account) => {
    const message = el("span", { class: "message" });
    const button = el("button", { type: "button", class: "confirm" }, t("ops.confirm"));
    button.disabled = account.token_issued_by === me; // the admin who issued it cannot confirm it
    button.addEventListener("click", async () => {
      try {
        await api("POST", `/v1/operator/players/${encodeURIComponent(account.id)}/confirm`);
        await Promise.all([loadUnconfirmed(), loadStaffLog()]);
      } catch (error) {
        message.replaceChildren(...refused(error));
        message.className = "message error";
      }
    });
    return el("li", { "data-account": account.id },
      t("ops.unconfirmed_item", { id: account.id, role: word("role", account.role), by: account.token_issued_by }),
      " ", button, message);
  }));
}

// ---- sign-in and navigation ------------------------------------------------------------------------------------

function signOut(message) {
  sessionStorage.removeItem(KEY);
  token = "";
  $("ops").hidden = true;
  $("sign-out").hidden = true;
  $("login").hidden = false;
  $("me").textContent = "";
  $("login-error").textContent = message || "";
}

async function route() {
  const match = /round=([^&]+)/.exec(location.hash);
  if (match) await showRound(decodeURIComponent(match[1])).catch((error) => say(refused(error), false));
}

async function signIn(candidate) {
  token = candidate;
  try {
    const identity = await api("GET", "/v1/operator/me");
    me = identity.id;
    role = identity.role;
  } catch (error) {
    signOut(error.status === 403 ? t("ops.not_operator") : error.message);
    return;
  }
  sessionStorage.setItem(KEY, token);
  $("login").hidden = true;
  $("ops").hidden = false;
  $("sign-out").hidden = false;
  $("me").textContent = t("ops.signed_in", { me });
  document.body.dataset.operator = me;
  document.body.dataset.role = role;
  // an admin manages staff, nothing else: the staff log is all their page shows
  for (const id of ["pending", "decks", "tables-section", "list", "detail"]) $(id).hidden = role === "admin";
  $("staff-details").open = role === "admin";
  if (role === "admin") {
    await Promise.all([loadStaffLog(), loadUnconfirmed()]);
    return;
  }
  await loadTables();
  await Promise.all([loadRounds(), loadProposals(), loadDecks(), loadStaffLog()]);
  // the round the address names, unless it is shown already (the operator may be typing in it: found by CI, where a
  // second rendering after sign-in wiped a reason being typed)
  if (!current) await route();
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("token").value.trim());
});
$("sign-out").addEventListener("click", () => signOut(""));
$("filters").addEventListener("submit", (event) => { event.preventDefault(); loadRounds(); });
$("preview").addEventListener("click", preview);
$("propose-correction").addEventListener("click", proposeCorrection);
$("void").addEventListener("click", voidRound);
$("propose-card").addEventListener("click", proposeCard);
$("staff-details").addEventListener("toggle", () => loadStaffLog().catch((error) => say(refused(error), false)));
window.addEventListener("hashchange", route);
setInterval(() => {
  if (!token) return;
  const loads = role === "admin" ? [loadStaffLog(), loadUnconfirmed()] : [loadProposals(), loadDecks(), loadStaffLog()];
  Promise.all(loads).catch(() => {});
}, 5000);

I18N.ready.then(() => {
  const saved = sessionStorage.getItem(KEY);
  if (saved) signIn(saved); else signOut("");
});
