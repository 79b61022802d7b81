// The roads of a shoe, drawn from a coup game's public state (``roads``): the Bead Plate, the Big Road, and for
// baccarat the Big Eye Boy, Small Road and Cockroach Pig with the ask road. Shared by the coup page and the overlay.
// Every road is a grid six rows high; the newest columns stay in sight (each road scrolls to its right end).
"use strict";

const ROAD_ROWS = 6;
const DERIVED_ROADS = ["big_eye_boy", "small_road", "cockroach_pig"];

// Where each cell of a road's columns goes on the grid: a column starts at the top of the grid column after the one
// the previous column started in (or further right, past a tail); one longer than the grid, or one that meets an
// earlier tail, turns right along its row (the dragon tail).
function roadLayout(columns, rows = ROAD_ROWS) {
  const taken = new Set();
  const placed = [];
  let start = -1;
  for (const column of columns) {
    start += 1;
    while (taken.has(start + ":0")) start += 1;
    let x = start;
    let y = 0;
    let turned = false;
    column.forEach((cell, index) => {
      if (index > 0) {
        if (!turned && y + 1 < rows && !taken.has(x + ":" + (y + 1))) y += 1;
        else { turned = true; x += 1; }
      }
      taken.add(x + ":" + y);
      placed.push({ x, y, cell });
    });
  }
  return placed;
}

function roadGrid(name, placed) {
  const grid = el("div", { class: "road-grid", "data-road": name });
  for (const { x, y, node } of placed) {
    node.style.gridColumn = String(x + 1);
    node.style.gridRow = String(y + 1);
    grid.append(node);
  }
  return grid;
}

// A result as words: "Banker", "Tie", "Dragon", with the flags it had ("Banker · Player pair").
function markTitle(mark) {
  const flags = ["natural", "player_pair", "banker_pair", "suited_tie"].filter((flag) => mark[flag]);
  return [t("coup.side." + mark.winner), ...flags.map((flag) => t("coup.flag." + flag))].join(" · ");
}

function beadPlate(marks) {
  return roadGrid("bead_plate", marks.map((mark, index) => ({
    x: Math.floor(index / ROAD_ROWS), y: index % ROAD_ROWS,
    node: el("span", { class: "bead " + mark.winner + (mark.player_pair ? " player-pair" : "")
                              + (mark.banker_pair ? " banker-pair" : ""),
                       "data-winner": mark.winner, title: markTitle(mark) }, t("coup.bead." + mark.winner)),
  })));
}

function bigRoad(columns) {
  return roadGrid("big_road", roadLayout(columns).map(({ x, y, cell }) => ({
    x, y, node: el("span", { class: "ring " + cell.winner, "data-winner": cell.winner, "data-ties": cell.ties,
                             title: t("coup.side." + cell.winner) + (cell.ties ? " · " + t("coup.ties", { n: cell.ties })
                               : "") }, cell.ties ? String(cell.ties) : ""),
  })));
}

function derivedRoad(name, columns) {
  return roadGrid(name, roadLayout(columns).map(({ x, y, cell }) => ({
    x, y, node: el("span", { class: "mark " + cell, "data-colour": cell, title: t("coup.colour." + cell) }),
  })));
}

function roadSection(name, grid) {
  const section = el("section", { class: "road" }, el("h3", {}, t("coup.road." + name)), grid);
  requestAnimationFrame(() => { grid.scrollLeft = grid.scrollWidth; }); // the newest coups in sight
  return section;
}

// What each derived road would add if the next coup went to ``side``: three small marks (or "–" before a road starts).
function askNode(side, asked) {
  return el("div", { class: "ask", "data-side": side },
    el("span", { class: "ask-name" }, t("coup.ask", { side: t("coup.side." + side) })),
    ...DERIVED_ROADS.map((road) => asked[road]
      ? el("span", { class: "mark " + asked[road] + " " + road, "data-road": road, "data-colour": asked[road],
                     title: t("coup.road." + road) + ": " + t("coup.colour." + asked[road]) })
      : el("span", { class: "mark none", "data-road": road, title: t("coup.road." + road) }, "–")));
}

// Every road of the shoe so far, with its counts; ``sides`` are the game's two (["player", "banker"]).
function roadsNode(roads, sides) {
  const counts = el("p", { class: "road-counts" }, [...sides, "tie"]
    .map((side) => t("coup.count", { side: t("coup.side." + side), n: (roads.counts || {})[side] || 0 })).join(" · "));
  const parts = [counts, roadSection("bead_plate", beadPlate(roads.bead_plate || [])),
                 roadSection("big_road", bigRoad(roads.big_road || []))];
  for (const road of DERIVED_ROADS) {
    if (roads[road]) parts.push(roadSection(road, derivedRoad(road, roads[road])));
  }
  if (roads.ask) parts.push(el("div", { class: "asks" }, ...sides.map((side) => askNode(side, roads.ask[side]))));
  return el("div", { class: "roads", "data-coups": roads.coups || 0 }, ...parts);
}
