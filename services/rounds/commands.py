"""The round service's commands: a card dealt, a window ended, a player's action, a player's settings."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cards import Card
from services.rounds.adapters import Action
from services.rounds.core import RoundCore
from services.rounds.errors import NotFoundError, RoundError
from services.rounds.models import GameTable, Round
from services.rounds.records import SETTINGS_CACHE, Along, Applied


class Commands(RoundCore):
    """A card dealt, a player's action, a player's settings (the command path itself is the core's)."""

    def deal(
        self,
        round_id: str,
        card: Card,
        actor: str = "shoe",
        also: Callable[[Session], None] | None = None,
        along: Along | None = None,
    ) -> Applied:
        """Deal the next card; ``also(session)`` writes in the same transaction (the controller's journal), ``along``
        runs first with the round locked (a proposal's decision)."""
        return self.command(round_id, lambda port: port.deal(card), actor, also=also, along=along)

    def act(self, player: str, round_id: str, name: str, body: Any, key: str | None) -> Any:
        """A player's action ``name`` in the round, as the round's game defines it."""
        game = self._round_games.get(round_id)
        if game is None:
            with self.sessions() as session:
                game = session.scalar(
                    select(GameTable.game).join(Round, Round.table_id == GameTable.id).where(Round.id == round_id)
                )
            if game is None:
                raise NotFoundError(f"round {round_id!r} does not exist")
            if len(self._round_games) >= SETTINGS_CACHE:
                self._round_games.clear()
            self._round_games[round_id] = game
        action, body = self._action(game, round_id, name, body)
        return action.run(self, player, round_id, body, key)

    def act_soon(self, player: str, round_id: str, name: str, body: Any, key: str | None) -> Awaitable[Any] | None:
        """``act`` from an event loop: its answer to await where the action can be answered without blocking
        and the round's game is known here; else None (``act`` it in a thread)."""
        game = self._round_games.get(round_id)
        action = None if game is None else self._named(game, name)
        if game is None or action is None or action.soon is None:
            return None
        return action.soon(self, player, round_id, self._body(action, game, round_id, body), key)

    def known_action(self, round_id: str, name: str) -> Action | None:
        """The round's game's action ``name``, if this process knows the round's game (no database)."""
        game = self._round_games.get(round_id)
        return None if game is None else self._named(game, name)

    def _named(self, game: str, name: str) -> Action | None:
        return next((a for a in self.games.adapter(game).actions if a.name == name), None)

    def _action(self, game: str, round_id: str, name: str, body: Any) -> tuple[Action, Any]:
        """The game's action ``name`` and the body read as its own."""
        action = self._named(game, name)
        if action is None:
            raise NotFoundError(f"round {round_id} is a {game} round: it has no action {name!r}")
        return action, self._body(action, game, round_id, body)

    @staticmethod
    def _body(action: Action, game: str, round_id: str, body: Any) -> Any:
        """``body`` as the action's own (a JSON object for an action games share: read as this game's body)."""
        return body if isinstance(body, action.body) else _as_body(action.body, body, f"round {round_id} plays {game}")

    def profile(self, player: str) -> dict[str, Any]:
        """A player's settings in every game (``/v1/me``)."""
        profile: dict[str, Any] = {}
        for each in self.games.every():
            profile |= each.profile(self, player)
        return profile

    def set_profile(self, player: str, values: dict[str, Any]) -> None:
        """Change a player's settings; each goes to the game that has it."""
        for name, value in values.items():
            owner = next((a for a in self.games.every() if name in a.profile_settings), None)
            if owner is None:
                raise RoundError(f"no game has a player setting {name!r}")
            owner.set_profile(self, player, name, value)


def _as_body(model: type[BaseModel], body: BaseModel | Mapping[str, Any], game: str) -> BaseModel:
    """``body`` (a JSON object, or another game's model) read as ``model``, or a refusal naming each field that does not
    fit, as the API names a body's problems, and the game that judged it."""
    try:
        return model.model_validate(body.model_dump() if isinstance(body, BaseModel) else body)
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(map(str, ('body', *e['loc'])))}: {e['msg']}" for e in error.errors())
        raise RoundError(f"{wrong} ({game})") from None
