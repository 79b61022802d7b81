"""A deterministic simulation of the whole studio under seeded faults, checking every invariant after every step."""
