"""Simulated devices: a virtual serial shoe on a pty (and, later, a synthetic camera)."""

from hardware.sim.serial_shoe import DECK, Faults, VirtualShoe, card_frame, shuffled_deck

__all__ = ["DECK", "Faults", "VirtualShoe", "card_frame", "shuffled_deck"]
