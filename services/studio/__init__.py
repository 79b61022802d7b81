"""The studio assembled in one process (``studio up``, ``studio demo``)."""
