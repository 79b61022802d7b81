"""The root of the shoe's exceptions (its device, its daemon, its signing keys), each with a stable ``code``."""


class ShoeError(Exception):
    code = "shoe_error"
