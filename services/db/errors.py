"""The root of the database layer's exceptions, each with a stable ``code``."""


class DbError(Exception):
    code = "database_error"
