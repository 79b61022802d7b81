"""``studio demo``: the whole studio on one machine, with simulated players, printing every round.

Two tables (by default), each with a simulated shoe on a pty read by its shoe daemon, a
simulated dealer following the dealer console, the round controller, the ledger and the betting
API — all the production code on the embedded defaults (or ``STUDIO_MQTT_URL`` /
``STUDIO_DATABASE_URL``). Simulated players bet, insure and decide. ``--rounds N`` stops after N
rounds per table and prints a summary; ``--forever`` keeps it running.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.bus.broker import without_login
from services.cli.arguments import positive_int, table_ids
from services.cli.commands import help_of
from services.cli.up import coup_tables, public_login, studio_urls
from services.controller.shoestart import NOTICES
from services.games.pokdeng import Phase, Position, RoundResult
from services.rounds import queries
from services.rounds.pokdeng import pokdeng
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import stored_round
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from services.studio.players import (
    SimulatedCoupBettors,
    SimulatedPlayers,
    SimulatedRoomPlayers,
    SimulatedTienLenPlayers,
)

DEMO_WINDOWS = {"betting_window_ms": 2_500, "insurance_window_ms": 1_500, "decision_window_ms": 1_500}
# --forever is for people at the pages: windows a person can use (the spec's defaults are 15 / 8 / 10 s)
HUMAN_WINDOWS = {"betting_window_ms": 10_000, "insurance_window_ms": 6_000, "decision_window_ms": 8_000}
HUMAN_FUNDS = 1_000_000  # minor units given to the demo's player token
ROOM_WINDOWS = {"unit": 10, "ready_ms": 5_000, "arranging_ms": 3_000, "showdown_ms": 700}
HUMAN_ROOM_WINDOWS = {
    "unit": 10,
    "ready_ms": 20_000,
    "seating_ms": 10_000,
    "arranging_ms": 60_000,
    "showdown_ms": 3_000,
}
TIENLEN_WINDOWS = {"unit": 10, "seating_ms": 3_000, "turn_ms": 600}  # seats taken in time on a busy machine too
HUMAN_TIENLEN_WINDOWS = {"unit": 10, "seating_ms": 15_000, "seated_ms": 10_000, "turn_ms": 20_000}
COUP_WINDOWS = {"baccarat": {"betting_ms": 2_500}, "dragontiger": {"betting_ms": 2_500}}
HUMAN_COUP_WINDOWS: dict[str, dict[str, Any]] = {"baccarat": {}, "dragontiger": {}}  # the games' own: 15 s and 12 s


def register(commands: Any) -> None:
    parser = commands.add_parser("demo", help=help_of("demo"))
    parser.add_argument("--rounds", type=positive_int, default=2, help="rounds per table before stopping (default 2)")
    parser.add_argument("--forever", action="store_true", help="keep the studio running until Ctrl-C")
    parser.add_argument(
        "--tables", type=table_ids, default=("T1", "T2"), help="comma-separated table ids (default T1,T2)"
    )
    parser.add_argument(
        "--rooms", type=table_ids, default=("MB1",),
        help="comma-separated Mậu Binh room ids, dealt online with simulated players (default MB1)",
    )  # fmt: skip
    parser.add_argument(
        "--tienlen-rooms", type=table_ids, default=("TL1",),
        help="comma-separated Tiến Lên room ids, dealt online with simulated players (default TL1)",
    )  # fmt: skip
    parser.add_argument(
        "--baccarat", type=table_ids, default=("B1",),
        help="comma-separated baccarat table ids, dealt from an 8-deck shoe with simulated bettors (default B1)",
    )  # fmt: skip
    parser.add_argument(
        "--dragontiger", type=table_ids, default=("DT1",),
        help="comma-separated Dragon Tiger table ids, dealt from an 8-deck shoe with simulated bettors (default DT1)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=None, help="random seed for the players")
    parser.set_defaults(run=run)


@dataclass
class Tally:
    rounds: dict[str, int] = field(default_factory=dict)
    wagers: int = 0
    staked: int = 0
    paid_to_players: int = 0
    house_net: int = 0
    seen: set[str] = field(default_factory=set)
    phases: dict[str, str] = field(default_factory=dict)


def run(args: argparse.Namespace) -> int:
    coups = coup_tables(args)
    tables = tuple(args.tables) + tuple(table for table, _game in coups)
    rooms = tuple(args.rooms) + tuple(args.tienlen_rooms)
    with tempfile.TemporaryDirectory(prefix="studio-demo-") as directory:
        windows = HOUSE_SETTINGS | (HUMAN_WINDOWS if args.forever else DEMO_WINDOWS)
        config = StudioConfig(
            tables=tuple(args.tables), run_dir=Path(directory), database_url=os.environ.get("STUDIO_DATABASE_URL"),
            mqtt_url=os.environ.get("STUDIO_MQTT_URL"), table_settings=windows,
            result_pause_ms=7_000 if args.forever else 1_500,  # a person reads a result in 6-8 s
            rooms=tuple(args.rooms), room_settings=HUMAN_ROOM_WINDOWS if args.forever else ROOM_WINDOWS,
            tienlen_rooms=tuple(args.tienlen_rooms),
            tienlen_settings=HUMAN_TIENLEN_WINDOWS if args.forever else TIENLEN_WINDOWS,
            coup_tables=coups, coup_settings=HUMAN_COUP_WINDOWS if args.forever else COUP_WINDOWS,
        )  # fmt: skip
        with running_studio(config) as studio:
            broker = without_login(studio.mqtt_url)
            print(f"studio demo: broker {broker}, API {studio.api_url}, tables {', '.join(tables + rooms)}")
            if args.forever:  # watching the pages: a throwaway database, so hand out a console token
                print(studio_urls(studio, tables, public_login(config.mqtt_url, studio.mqtt_url), rooms))
                dealer = f"dealer-{uuid.uuid4().hex[:6]}"
                token = studio.players.register(dealer, "dealer")
                for table in tables:
                    studio.players.assign(table, dealer)
                print(f"  dealer console token (this demo's database only, every table): {token}")
                for operator in ("pit-1", "pit-2"):  # two: a settled round's correction needs a second operator
                    token = studio.players.register(operator, "operator")
                    print(f"  operator's page token ({operator}): {token}")
                you = f"you-{uuid.uuid4().hex[:6]}"
                token = studio.players.register(you)
                studio.wallets.deposit(you, HUMAN_FUNDS, key=f"demo-fund-{you}", actor="demo")
                print(f"  player's page token ({you}, {HUMAN_FUNDS:,} minor units to play with): {token}")
            stop = threading.Event()
            players = [
                threading.Thread(target=SimulatedPlayers(studio, args.seed or 0).run, args=(stop,), daemon=True),
                threading.Thread(target=SimulatedRoomPlayers(studio, args.seed or 0).run, args=(stop,), daemon=True),
                threading.Thread(target=SimulatedTienLenPlayers(studio, args.seed or 0).run, args=(stop,), daemon=True),
            ]
            for index, game in enumerate(sorted({game for _table, game in coups})):
                bettors = SimulatedCoupBettors(studio, game, (args.seed or 0) + index)
                players.append(threading.Thread(target=bettors.run, args=(stop,), daemon=True))
            for thread in players:
                thread.start()
            tally = Tally()
            deadline = time.monotonic() + 120 * max(1, args.rounds)
            try:
                while args.forever or min(tally.rounds.get(t, 0) for t in tables + rooms) < args.rounds:
                    if not args.forever and time.monotonic() > deadline:
                        print("studio demo: the rounds did not finish in time")
                        return 1
                    report(studio, tally)
                    time.sleep(0.1)
            except KeyboardInterrupt:
                pass
            finally:
                stop.set()
                for thread in players:
                    thread.join(timeout=5)
            alerts = sum(
                count for table in studio.controller.tables.values()
                for name, count in table.counters.items()
                if name.startswith("alerts_") and name.removeprefix("alerts_") not in NOTICES
            )  # fmt: skip
    print(
        f"summary: {sum(tally.rounds.values())} rounds ({', '.join(f'{t} {n}' for t, n in tally.rounds.items())}), "
        f"{tally.wagers} wagers, staked {tally.staked}, paid to players {tally.paid_to_players}, "
        f"house net {tally.house_net:+d}, alerts {alerts}"
    )
    return 0


def report(studio: RunningStudio, tally: Tally) -> None:
    """Print each phase as a table enters it, and each round when it is over."""
    for table_id, table in studio.controller.tables.items():
        current = table.current
        if current is None:
            continue
        marker = f"{current.round_id}:{current.phase}"
        if tally.phases.get(table_id) != marker:
            tally.phases[table_id] = marker
            if current.phase not in (Phase.SETTLED, Phase.VOID):
                print(f"  {current.round_id}: {current.phase}…", flush=True)
        if current.phase != Phase.SETTLED or current.round_id in tally.seen:
            continue
        if current.game in COUPS:
            tally.seen.add(current.round_id)
            tally.rounds[table_id] = tally.rounds.get(table_id, 0) + 1
            print(render_coup(studio, current.game, current.round_id, tally), flush=True)
            continue
        if current.game in ROOMS:
            tally.seen.add(current.round_id)
            tally.rounds[table_id] = tally.rounds.get(table_id, 0) + 1
            print(render_settled_room(studio, current.game, current.round_id), flush=True)
            continue
        result = pokdeng(studio.service).round(current.round_id).result
        if result is not None:
            tally.seen.add(current.round_id)
            tally.rounds[table_id] = tally.rounds.get(table_id, 0) + 1
            tally.wagers += len(result.wagers)
            tally.staked += sum(item.wager.stake for item in result.wagers)
            tally.paid_to_players += sum(max(0, net) for net in result.player_nets().values())
            tally.house_net += result.house_net()
            print(render(f"{current.round_id} settled", result), flush=True)


def render(title: str, result: RoundResult) -> str:
    lines = [f"── {title} " + "─" * max(0, 60 - len(title)) + ("  (settled early)" if result.early else "")]
    for position, hand in result.hands.items():
        cards = " ".join(map(str, hand.cards))
        outcome = "" if position is Position.BANKER else f"→ {result.outcomes[position]}"
        rank = hand.rank.name.lower()
        lines.append(f"  {position!s:>6}  {cards:<9} {hand.points} pts  {rank:<14} ×{hand.multiplier} {outcome}")
    for item in sorted(result.wagers, key=lambda item: item.wager.order):
        wager = item.wager
        lines.append(
            f"    {wager.player:<6} {wager.side:<6} on {wager.seat}  stake {wager.stake:>4}  net {item.net:+5d}"
        )
    for insurance in result.insurance:
        lines.append(f"    {insurance.player:<6} insurance    stake {insurance.amount:>4}  net {insurance.net:+5d}")
    lines.append(f"    house net {result.house_net():+d}")
    return "\n".join(lines)


def render_room(state: dict[str, Any], players: dict[str, str]) -> list[str]:
    """A settled Mậu Binh hand: each seat's player, chi with their names, and units won or paid."""
    lines = []
    units = state.get("result", {}).get("units", {})
    for seat, chis in sorted(state.get("chi", {}).items()):
        shown = " | ".join(f"{' '.join(chi['cards'])} ({chi['name']})" for chi in chis)
        lines.append(f"  seat {seat} {players.get(seat, ''):<4} {shown}  units {units.get(seat, 0):+d}")
    for seat in state.get("left", []):
        name = players.get(seat, "")
        lines.append(f"  seat {seat} {name:<4} left before the showdown  units {units.get(seat, 0):+d}")
    return lines


def render_tienlen(state: dict[str, Any], players: dict[str, str]) -> list[str]:
    """A finished Tiến Lên round: who won, each seat's player and payment in units."""
    result = state.get("result") or {}
    won = {result.get("winner"): "  wins"}
    return [
        f"  seat {seat} {players.get(seat, ''):<5} units {units:+d}{won.get(seat, '')}"
        for seat, units in sorted((result.get("units") or {}).items())
    ]


def render_settled_room(studio: RunningStudio, game: str, round_id: str) -> str:
    """A room's round once it is over: its game's lines between a title and the shuffle's commitment."""
    state = queries.round_state(studio.service, round_id)
    title = f"{round_id} settled ({GAME_NAMES[game]}, dealt online)"
    lines = [f"── {title} " + "─" * max(0, 60 - len(title))]
    lines += ROOMS[game](state, studio.service.seats(round_id))
    lines.append(f"    shuffle commitment {state['shuffle']['commitment'][:16]}… (deck and salt published)")
    return "\n".join(lines)


ROOMS = {"maubinh": render_room, "tienlen": render_tienlen}
GAME_NAMES = {"maubinh": "Mậu Binh", "tienlen": "Tiến Lên"}


def render_coup(studio: RunningStudio, game: str, round_id: str, tally: Tally) -> str:
    """A settled coup: each hand with its cards and total, the winner, each wager's net (counted in the tally), and
    the shoe's Big Road so far."""
    state = queries.round_state(studio.service, round_id)
    with studio.service.sessions() as session:
        stakes = studio.service.games.adapter(game).stakes(session, stored_round(session, round_id))
    result = state["result"]
    title = f"{round_id} settled ({GAME_NAMES[game]})"
    lines = [f"── {title} " + "─" * max(0, 60 - len(title))]
    for hand, shown in state["hands"].items():
        lines.append(f"  {hand:>7}  {' '.join(shown['cards']):<9} {shown['total']}")
    flags = [
        flag.replace("_", " ") for flag in ("natural", "player_pair", "banker_pair", "suited_tie") if result.get(flag)
    ]
    lines.append(f"  winner {result['winner']}" + (f" ({', '.join(flags)})" if flags else ""))
    for wager in stakes:
        lines.append(f"    {wager['player']:<6} {wager['side']:<11} stake {wager['stake']:>5}  net {wager['net']:+6d}")
    house = -sum(wager["net"] for wager in stakes)
    lines.append(f"    house net {house:+d}")
    road = " ".join("".join(cell["winner"][0].upper() for cell in column) for column in state["roads"]["big_road"])
    lines.append(f"    big road: {road}")
    tally.wagers += len(stakes)
    tally.staked += sum(wager["stake"] for wager in stakes)
    tally.paid_to_players += sum(max(0, wager["net"]) for wager in stakes)
    tally.house_net += house
    return "\n".join(lines)


COUPS = ("baccarat", "dragontiger")
GAME_NAMES |= {"baccarat": "baccarat, 8-deck shoe", "dragontiger": "Dragon Tiger, 8-deck shoe"}
