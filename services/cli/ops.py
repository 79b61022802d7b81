"""``studio ops``: operator tools on the database (``--json`` for scripts).

``rounds`` and ``show`` read rounds in full; ``void`` voids an unsettled round at once and proposes the void of a
settled one; ``correct`` proposes a correction from the video (``--preview``: only show what it would change);
``card`` proposes a card the shoe could not read as a live round's next (on a table that takes cards by hand);
``proposals``, ``approve`` and ``reject`` decide them — a second operator approves what another proposed; ``decks``
lists each deck's reconciliation and ``acknowledge`` lifts the hold of a deck not whole, once its cards are counted.
Whoever acts proves it with their own bearer token (``--token`` or ``STUDIO_OPERATOR_TOKEN``), as on the API.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Any

from services.cli.arguments import add_database_options, moment, open_database, table_id
from services.cli.commands import help_of


def register(commands: Any) -> None:
    parser = commands.add_parser("ops", help=help_of("ops"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("rounds", help="rounds newest first, by table, state and time")
    listing.add_argument("--table", type=table_id, default=None)
    listing.add_argument("--state", choices=("open", "settled", "void", "corrected"), default=None)
    listing.add_argument("--since", type=moment, default=None, help="opened at or after (ISO time, UTC if no zone)")
    listing.add_argument("--until", type=moment, default=None, help="opened before")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (1–200)")
    show = actions.add_parser("show", help="a round in full: log, shoe journal, wagers and money movements")
    show.add_argument("round_id", metavar="ROUND")
    void = actions.add_parser("void", help="void a round (a settled one: a proposal for a second operator)")
    void.add_argument("round_id", metavar="ROUND")
    void.add_argument("--reason", required=True)
    correct = actions.add_parser("correct", help="propose cards corrected from the video, for a second operator")
    correct.add_argument("round_id", metavar="ROUND")
    fix_help = "a dealt card's index (0-based, shoe order) and the card the video shows; repeatable"
    correct.add_argument("--card", type=card_fix, action="append", required=True, metavar="INDEX=CARD", help=fix_help)
    correct.add_argument("--video-ref", default="", help="where on the video (required unless --preview)")
    correct.add_argument("--preview", action="store_true", help="only show what it would change")
    by_hand = actions.add_parser(
        "card", help="propose a card the shoe could not read as a live round's next, for a second operator"
    )
    by_hand.add_argument("round_id", metavar="ROUND")
    by_hand.add_argument("--card", type=card_code, required=True, metavar="CARD", help="rank + suit, e.g. 7D")
    by_hand.add_argument("--reason", required=True, help="why the shoe could not read it")
    proposals = actions.add_parser("proposals", help="proposals newest first")
    proposals.add_argument("--status", choices=("pending", "applied", "rejected"), default=None)
    approve = actions.add_parser("approve", help="apply another operator's proposal")
    approve.add_argument("proposal_id", type=int, metavar="ID")
    reject = actions.add_parser("reject", help="reject a proposal, saying why")
    reject.add_argument("proposal_id", type=int, metavar="ID")
    reject.add_argument("--reason", required=True)
    deck_reports = actions.add_parser("decks", help="each deck reconciled when it ended (held: the table waits)")
    deck_reports.add_argument("--table", type=table_id, default=None)
    deck_reports.add_argument("--status", choices=("ok", "held", "acknowledged"), default=None)
    deck_reports.add_argument("--limit", type=int, default=50, help="at most this many (1–200)")
    acknowledge = actions.add_parser("acknowledge", help="a held deck was counted: say what was found; it deals on")
    acknowledge.add_argument("report_id", type=int, metavar="ID")
    acknowledge.add_argument("--note", required=True, help="what the count found")
    confirm = actions.add_parser(
        "confirm", help="a card the overhead camera disputed: say whose read is right (a held round then settles)"
    )
    confirm.add_argument("round_id", metavar="ROUND")
    confirm.add_argument("position", type=int, metavar="INDEX", help="the card's index (0-based, shoe order)")
    confirm.add_argument("--read", choices=("shoe", "camera"), required=True, help="whose read is right")
    confirm.add_argument("--reason", required=True, help="what the video shows")
    for action in (void, correct, by_hand, approve, reject, acknowledge, confirm):
        action.add_argument(
            "--token", default=os.environ.get("STUDIO_OPERATOR_TOKEN"),
            help="the acting operator's bearer token (default: STUDIO_OPERATOR_TOKEN): four eyes are two tokens",
        )  # fmt: skip
    for action in (
        listing,
        show,
        void,
        correct,
        by_hand,
        proposals,
        approve,
        reject,
        deck_reports,
        acknowledge,
        confirm,
    ):
        action.add_argument("--json", action="store_true", help="one JSON document")
        add_database_options(action)
        action.set_defaults(run=run)


def card_code(text: str) -> str:
    from services.cards import Card

    try:
        return str(Card.from_code(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def card_fix(text: str) -> tuple[int, str]:
    from services.cards import Card

    index, _, code = text.partition("=")
    try:
        return int(index), str(Card.from_code(code))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INDEX=CARD such as 8=2C, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    from services.catalog import STUDIO_GAMES
    from services.db import session_factory
    from services.games.base import GameError
    from services.rounds.errors import RoundError
    from services.rounds.service import RoundService

    engine = open_database(args, f"studio ops {args.action}")
    if engine is None:
        return 2
    service = RoundService(session_factory(engine), games=STUDIO_GAMES)
    try:
        found = _act(service, args)
    except (RoundError, GameError) as error:
        print(f"studio ops {args.action}: {error}", file=sys.stderr)
        return 1
    if args.json or args.action not in ("rounds", "show", "decks"):
        print(json.dumps(found, indent=2))
    elif args.action == "rounds":
        _print_rounds(found)
    elif args.action == "decks":
        _print_decks(found)
    else:
        _print_round(found)
    return 0


def _act(service: Any, args: argparse.Namespace) -> Any:
    from services.cards import Card
    from services.rounds import audit, decks
    from services.rounds.proposals import FourEyesRequiredError, Origin, Proposals

    if args.action == "rounds":
        return audit.rounds(service, audit.RoundsQuery(args.table, args.state, args.since, args.until, args.limit))
    if args.action == "show":
        return audit.round_audit(service, args.round_id)
    if args.action == "decks":
        return decks.reports(service, decks.DecksQuery(args.table, args.status, args.limit))
    proposals = Proposals(service)
    if args.action == "proposals":
        return proposals.list(args.status)
    origin = Origin(_operator(service, args.token), f"cli@{socket.gethostname()}")
    if args.action == "void":
        try:
            proposals.void_unsettled(args.round_id, args.reason, origin.operator)
        except FourEyesRequiredError:  # settled: its void is a proposal for a second operator
            return proposals.propose_void(args.round_id, args.reason, origin)
        return audit.round_audit(service, args.round_id)
    if args.action == "correct":
        cards = {index: Card.from_code(code) for index, code in args.card}
        if args.preview:
            return service.preview_correction(args.round_id, cards)
        return proposals.propose_correction(args.round_id, cards, args.video_ref, origin)
    if args.action == "card":
        return proposals.propose_card(args.round_id, Card.from_code(args.card), args.reason, origin)
    if args.action == "approve":
        return proposals.approve(args.proposal_id, origin)
    if args.action == "acknowledge":
        return decks.acknowledge(service, args.report_id, args.note, origin)
    if args.action == "confirm":
        service.confirm_read(args.round_id, args.position, args.read, origin.operator, args.reason)
        return audit.card_checks(service, args.round_id)
    return proposals.reject(args.proposal_id, args.reason, origin)


def _operator(service: Any, token: str | None) -> str:
    """The operator whose token this is (the same check as the API's)."""
    from services.rounds.errors import ForbiddenError
    from services.rounds.players import PlayerService

    if not token:
        raise ForbiddenError("name the acting operator with --token or STUDIO_OPERATOR_TOKEN")
    identity = PlayerService(service.sessions).authenticate(token)
    if identity.role != "operator":
        raise ForbiddenError(f"{identity.id!r} is not an operator")
    if not identity.confirmed:
        raise ForbiddenError(
            f"{identity.id}'s token was issued by {identity.issued_by} and no second admin confirmed it"
        )
    return str(identity.id)


def _print_rounds(rounds: list[dict[str, Any]]) -> None:
    print(f"{'round':<24} {'table':<12} {'state':<10} {'opened':<26} {'settled or voided'}")
    for r in rounds:
        print(f"{r['round_id']:<24} {r['table_id']:<12} {r['state']:<10} {r['opened_at']:<26} "
              f"{r['voided_at'] or r['settled_at'] or '-'}")  # fmt: skip
    print(f"{len(rounds)} round(s)")


def _print_decks(reports: list[dict[str, Any]]) -> None:
    for r in reports:
        if r["missing"] is None:  # the round dealt when the deck ended is still dealt: counts only
            wrong = [f"{r['missing_count']} missing, {r['doubled_count']} seen twice (named when the round ends)"]
        else:
            wrong = [f"missing {' '.join(c or '(face down)' for c in r['missing'])}"] if r["missing"] else []
            wrong += [f"seen twice {' '.join(c or '(face down)' for c in r['doubled'])}"] if r["doubled"] else []
        done = r["acknowledged"]
        said = f" — acknowledged by {done['by']}: {done['note']}" if done else ""
        print(f"#{r['id']:<5} {r['table_id']:<12} {r['status']:<12} {r['at']:<26} {r['seen']:>3} seen"
              f"{'; ' + '; '.join(wrong) if wrong else ''}{said}")  # fmt: skip
    print(f"{len(reports)} deck report(s)")


def _print_round(record: dict[str, Any]) -> None:
    print(f"round {record['round_id']} (table {record['table_id']}, #{record['number']}): {record['state']}, "
          f"opened {record['opened_at']}, video {record['video_ref'] or '-'}")  # fmt: skip
    print("log:")
    for entry in record["log"]:
        print(f"  {entry['seq']:>3} {entry['at']} {entry['actor']}: {json.dumps(entry['command'])}")
    print("shoe journal:")
    for row in record["shoe"]:
        card = row["card"] or ("(face down)" if row["kind"] == "card" else row["kind"])
        why = f" — {row['reason']}" if row["reason"] else ""
        print(f"  seq {row['seq']:>4} {row['video_tc']} {card:<11} {row['disposition']}{why}")
    if record["checks"]:
        print("camera checks:")
    for c in record["checks"]:
        camera = c["camera_card"] or "-"
        by = c["confirmed_by"]
        word = f" — {c['confirmed_read']} confirmed by {by}: {c['confirmed_why']}" if by else ""
        print(f"  card {c['position']:>2} shoe {c['card']} camera {camera:<2} {c['status']}{word}")
    print("wagers:")
    for w in record["wagers"]:
        print(f"  {w['wager_id']} {w['player']} {w['side']} {w['seat']} stake {w['stake']} net {w['net']}")
    print("money:")
    for m in record["money"]:
        source, target = (f"{end['account']}:{end['owner'] or 'house'}" for end in (m["from"], m["to"]))
        memo = f"  {m['memo']}" if m["memo"] else ""
        print(f"  {m['id']:>6} {m['kind']:<11} {m['amount']:>10} {m['currency']} {source} → {target}{memo}")
    print("holds:")
    for h in record["holds"]:
        line = h["resolution"]
        how = (
            "pending"
            if line is None
            else f"{line['status']}: lost {line['loss']}, won {line['win']}, commission {line['commission']}"
        )
        print(f"  {h['hold_id']:>6} {h['wager_id']} {h['player']} {h['amount']:>10} {h['currency']} {how}")
