"""Each game's player actions as routes: ``POST /v1/rounds/{round_id}/{action}``, schemas in OpenAPI.

The routes come from the games' adapters (``services.rounds.adapters``); the round service sends
each call to the adapter of the round's game, so an action of another game is refused there.
Games may share an action name (every house game has ``bets``) with bodies of their own: the route takes a JSON
object, OpenAPI lists each game's body for it (``shared_bodies``), and the round's game reads the object as its own
body (``RoundService.act``), so a refusal names only what that game found wrong.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations, which name
# each action's own body model.
from typing import Annotated, Any, Union

from fastapi import APIRouter, Body
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from services.api.deps import CurrentPlayer, IdempotencyKey, ServicesDep
from services.rounds.adapters import Action, Catalog
from services.rounds.errors import RoundError

COMPONENTS = "#/components/schemas/"


def action_routes(games: Catalog) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["player"])
    routes: dict[str, list[Action]] = {}
    for adapter in games.every():
        for action in adapter.actions:
            same = routes.setdefault(action.name, [])
            if same and (same[0].keyed, same[0].changes_state) != (action.keyed, action.changes_state):
                raise RoundError(
                    f"action {action.name!r} of {adapter.game_name} moves money or state unlike an earlier game's "
                    "action of that name: rename it"
                )
            same.append(action)
    for name, same in routes.items():
        action = same[0]
        bodies = tuple(dict.fromkeys(each.body for each in same))
        shared = len(bodies) > 1
        body = Annotated[dict[str, Any], Body()] if shared else bodies[0]
        schema = {"anyOf": [{"$ref": f"{COMPONENTS}{each.__name__}"} for each in bodies]}
        router.add_api_route(
            f"/rounds/{{round_id}}/{name}",
            _endpoint(name, body, action.keyed, action.changes_state),
            openapi_extra={"requestBody": {"content": {"application/json": {"schema": schema}}}} if shared else None,
            methods=["POST"],
            status_code=201 if action.keyed else 200,
            response_model=Union[tuple(dict.fromkeys(each.answer for each in same))],  # noqa: UP007
            summary=action.summary.split(";")[0],
            description=" ".join(dict.fromkeys(each.summary for each in same)),
            name=f"action_{name}",
        )
    return router


def shared_bodies(games: Catalog) -> dict[str, Any]:
    """The JSON schemas of every action body, for the OpenAPI document's components (a shared action's route
    refers to its games' bodies there)."""
    bodies = dict.fromkeys(action.body for adapter in games.every() for action in adapter.actions)
    _, schemas = models_json_schema([(body, "validation") for body in bodies], ref_template=COMPONENTS + "{model}")
    return dict(schemas.get("$defs", {}))


def _endpoint(name: str, body_model: Any, keyed: bool, changes_state: bool) -> Any:
    def told(services: Any, round_id: str) -> None:
        if changes_state:
            services.notify(round_id)
        services.changed(round_id)

    def act(services: Any, player: str, round_id: str, body: BaseModel | dict[str, Any], key: str | None) -> Any:
        answer = services.rounds.act(player, round_id, name, body, key)
        told(services, round_id)
        return answer

    if keyed:

        async def keyed_endpoint(
            round_id: str,
            body: body_model,
            key: IdempotencyKey,
            player: CurrentPlayer,
            services: ServicesDep,
        ) -> Any:
            """On the event loop where it can be (a bet slip queued for its batch), in a worker thread otherwise."""
            soon = services.rounds.act_soon(player.id, round_id, name, body, key)
            if soon is None:
                return await run_in_threadpool(act, services, player.id, round_id, body, key)
            answer = await soon
            told(services, round_id)
            return answer

        return keyed_endpoint

    def endpoint(round_id: str, body: body_model, player: CurrentPlayer, services: ServicesDep) -> Any:
        return act(services, player.id, round_id, body, None)

    return endpoint
