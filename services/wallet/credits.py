"""A round's credits sent together where the operator's wallet takes them: ``POST {base}/credits``.

Settlement records one ``credit`` per player of the round (``services.wallet.seamless.pay_out``); a table of 300
players is 300 calls. An operator's wallet may also take them as one request:

    POST {base}/credits      {"calls": [<a credit call, exactly as it would be sent alone>, …]}
    200                      {"answers": [<the answer to each, as it would be answered alone>, …]}

signed like any call (HMAC-SHA256 over the exact body, both ways). Each answer is final as a single call's is and
is matched to its call by ``transaction_id``; a call the answer leaves out stays pending and is sent again. A wallet
without the endpoint (404, 405 or 501) gets the credits one by one, as before — the studio asks once per process.
Up to ``MAX_CREDITS`` calls go in one request; the sender sends each round's pending credits this way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from services.wallet.models import WalletCallRecord
from services.wallet.protocol import WalletAnswer, WalletConfig, signed_by

PATH: Final = "credits"
MAX_CREDITS: Final = 200
UNSUPPORTED: Final = (404, 405, 501)  # the wallet has no such endpoint: credits one by one


def batch_body(records: Sequence[WalletCallRecord]) -> bytes:
    """The request's exact bytes: each call's own body, in order."""
    return json.dumps({"calls": [json.loads(record.body) for record in records]}, separators=(",", ":")).encode()


def answers_from(body: bytes, headers: Any, config: WalletConfig) -> dict[str, WalletAnswer] | None:
    """Each call's final answer by transaction id, or None when the response is not one the studio can trust
    (unsigned, wrongly signed, unreadable): every call's outcome is then unknown."""
    if not signed_by(body, config.secret, headers.get(config.signature_header)):
        return None
    try:
        answers = [WalletAnswer.model_validate(each) for each in json.loads(body)["answers"]]
    except (ValueError, KeyError, TypeError):
        return None
    return {answer.transaction_id: answer for answer in answers}
