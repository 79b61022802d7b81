"""An operator's wallet over HTTP (the seamless-wallet model): the operator keeps the player's money, the studio asks
it to move it (``protocol``), every call durable in an outbox until the operator answers (``outbox``)."""
