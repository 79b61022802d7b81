"""The root of the seamless wallet's exceptions; each has a stable ``code``."""


class WalletError(Exception):
    code = "wallet_error"
