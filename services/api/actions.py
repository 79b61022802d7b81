"""Each game's player actions as routes: ``POST /v1/rounds/{round_id}/{action}``, schemas in OpenAPI.

The routes come from the games' adapters (``services.rounds.adapters``); the round service sends
each call to the adapter of the round's game, so an action of another game is refused there.
Two games may share an action name only with the same request body.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations, which name
# each action's own body model.
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from services.api.deps import CurrentPlayer, IdempotencyKey, ServicesDep
from services.rounds.adapters import Action, Catalog
from services.rounds.errors import RoundError


def action_routes(games: Catalog) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["player"])
    routes: dict[str, Action] = {}
    for adapter in games.every():
        for action in adapter.actions:
            known = routes.setdefault(action.name, action)
            if known.body is not action.body:
                raise RoundError(
                    f"action {action.name!r} of {adapter.game_name} has another body than an earlier game's: rename it"
                )
    for action in routes.values():
        router.add_api_route(
            f"/rounds/{{round_id}}/{action.name}",
            _endpoint(action.name, action.body, action.keyed, action.changes_state),
            methods=["POST"],
            status_code=201 if action.keyed else 200,
            response_model=action.answer,
            summary=action.summary.split(";")[0],
            description=action.summary,
            name=f"action_{action.name}",
        )
    return router


def _endpoint(name: str, body_model: type[BaseModel], keyed: bool, changes_state: bool) -> Any:
    def act(services: Any, player: str, round_id: str, body: BaseModel, key: str | None) -> Any:
        answer = services.rounds.act(player, round_id, name, body, key)
        if changes_state:
            services.notify(round_id)
        services.changed(round_id)
        return answer

    if keyed:

        def keyed_endpoint(
            round_id: str,
            body: body_model,  # type: ignore[valid-type]
            key: IdempotencyKey,
            player: CurrentPlayer,
            services: ServicesDep,
        ) -> Any:
            return act(services, player.id, round_id, body, key)

        return keyed_endpoint

    def endpoint(round_id: str, body: body_model, player: CurrentPlayer, services: ServicesDep) -> Any:  # type: ignore[valid-type]
        return act(services, player.id, round_id, body, None)

    return endpoint
