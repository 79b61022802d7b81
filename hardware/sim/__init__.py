"""Simulated devices: a virtual serial shoe on a pty (here) and a synthetic camera (``hardware.sim.camera``)."""

from hardware.codes import DECK
from hardware.sim.serial_shoe import Faults, VirtualShoe, card_frame, shuffled_deck

__all__ = ["DECK", "Faults", "VirtualShoe", "card_frame", "shuffled_deck"]
