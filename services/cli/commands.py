"""The ``studio`` subcommands: which module defines each, and its one-line help.

``studio COMMAND`` imports only that command's module, so a command starts without loading what
the others need (OpenCV, FastAPI, the engines…); the rest stay listed for ``--help`` and for
argparse's "invalid choice" message.
"""

from __future__ import annotations

from typing import Final

COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "replay": ("replay", "recompute Pok Deng rounds from a transcript file (or - for stdin)"),
    "pokdeng": ("pokdeng", "Pok Deng tools: the return to player of each bet for a table's settings"),
    "tienlen": ("tienlen", "Tiến Lên Miền Nam tools"),
    "maubinh": ("maubinh", "Mậu Binh tools"),
    "baccarat": ("baccarat", "Punto Banco baccarat tools: replay a coup, each bet's exact return"),
    "dragontiger": ("dragontiger", "Dragon Tiger tools: replay a coup, each bet's exact return"),
    "verify": ("verify", "check a published shuffle against the commitment made before its deal"),
    "demo": ("demo", "run a whole simulated studio and print its rounds"),
    "up": ("up", "run the whole studio (broker, API, controller, simulated shoes)"),
    "api": ("api", "serve the betting API (uvicorn)"),
    "players": ("api", "manage accounts"),
    "shoe": ("shoe", "run a shoe daemon: device → MQTT"),
    "new-deck": ("shoe", "announce a freshly shuffled deck to a table's shoe daemon"),
    "shoe-key": ("shoe", "make a shoe's signing key (the controller deals only what it signs)"),
    "broker": ("shoe", "run the embedded MQTT broker (amqtt) on a free or given port"),
    "cards": ("cards", "camera card recognition: calibrate, recognize, generated deck"),
    "record": ("record", "record a table's camera as HLS: H.264 segments dated by wall time and studio timecode"),
    "controller": ("controller", "run the round controller for some tables"),
    "ops": ("ops", "operator tools: list rounds, show a round in full (log, shoe journal, wagers, money)"),
    "wallet": ("wallet", "the operator's wallet: reconcile the studio's mirror with its answers, send the outbox"),
    "sim": ("sim", "the deterministic studio simulation: seeded rounds with faults, every invariant checked"),
}


def help_of(command: str) -> str:
    return COMMANDS[command][1]
