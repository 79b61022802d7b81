"""A simulation run's settings, its report and the faults it may strike (``services.sim.world`` runs it)."""

from __future__ import annotations

from dataclasses import dataclass, field

FAULTS: dict[str, str] = {
    "crash": "the controller process dies at any step and restarts from the database",
    "network": "shoe messages duplicated, reordered, delayed or lost (the resend path refills them)",
    "broker": "the broker goes away for a while",
    "database": "a database statement fails mid-transaction (the connection lost, or the statement refused)",
    "misread": "the shoe cannot read a card; the dealer scans it again",
    "burn": "a burn card before a card",
    "foreign": "a card from another shoe, or one signed with a key the table does not hold",
    "early": "a card dealt while betting is open",
    "extra": "a card dealt when the round wants none",
    "rescan": "a card of the deck scanned a second time",
    "deck": "a new deck loaded in the middle of a round",
    "retry": "players send a request again with the same idempotency key, or reuse a key for another request",
    "disconnect": "a player leaves their draw/stand decision to time out",
    "race": "bets sent right at the close of betting",
    "operator": "operators void rounds (settled or not) and correct settled rounds' cards",
    "camera": "an overhead camera checks the shoe (verify warn or hold): it misses a card, sees another or sees it "
    "late; operators confirm the disputed reads",
    "leave": "room players leave: before the deal (the hold comes back) or during the hand (they pay as leavers)",
    "kick": "a seated Mậu Binh player is never ready: the ready check removes them",
}


class Violation(Exception):
    """An invariant that did not hold."""

    code = "invariant"


@dataclass(frozen=True)
class SimSettings:
    seed: int
    rounds: int = 20  # rounds to open, across all tables
    tables: int = 2
    baccarat: int = 0  # baccarat tables besides (8-deck shoes: the burn, the cut card)
    dragontiger: int = 0  # and Dragon Tiger tables
    maubinh: int = 0  # Mậu Binh rooms besides (from the shoe and online in turn: ``rooms.room_deal``)
    tienlen: int = 0  # and Tiến Lên rooms
    faults: frozenset[str] = frozenset(FAULTS)
    players: int = 4  # per table
    betting_ms: int = 2_500
    insurance_ms: int = 1_500
    decision_ms: int = 2_000

    def coups(self) -> dict[str, int]:
        """How many tables of each coup game a run has besides its Pok Deng ones."""
        return {"baccarat": self.baccarat, "dragontiger": self.dragontiger}

    def rooms(self) -> dict[str, int]:
        """How many rooms of each room game a run has."""
        return {"maubinh": self.maubinh, "tienlen": self.tienlen}

    def others(self) -> dict[str, int]:
        """Every table a run has besides its Pok Deng ones, by game."""
        return self.coups() | self.rooms()


@dataclass
class Report:
    settings: SimSettings
    steps: int = 0
    checks: int = 0
    rounds: int = 0  # rounds that ended
    simulated_s: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    violation: str | None = None
    step: int | None = None  # the step at which it was found
    trace: list[str] = field(default_factory=list)
    digest: str = ""  # of every step taken: two runs of one seed and options have the same

    def command(self) -> str:
        s = self.settings
        faults = ",".join(sorted(s.faults)) if s.faults != frozenset(FAULTS) else "all"
        tables = f"--tables {s.tables}" + "".join(f" --{game} {n}" for game, n in s.others().items() if n)
        return f"studio sim --seed {s.seed} --rounds {s.rounds} {tables} --faults {faults or 'none'}"
