"""The simulator's own rank glyphs: strokes and arcs in a unit box, drawn at any size and style.

Nothing here is copied from a font or a deck: each rank is a few lines and elliptic arcs,
and a style varies the stroke, width and slant so a recogniser can be tested on glyphs it was
not calibrated on. (OpenCV's own ``putText`` no longer varies with its font ids, so it cannot.)
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

Stroke = list[tuple[float, float]]  # a polyline in the unit box: x right, y down, both 0–1


def _arc(cx: float, cy: float, rx: float, ry: float, start: float, end: float) -> Stroke:
    """Points of an elliptic arc; angles in degrees, 0 = right, 90 = down (image coordinates)."""
    steps = max(8, int(abs(end - start) / 10))
    angles = np.radians(np.linspace(start, end, steps))
    return [(cx + rx * float(np.cos(a)), cy + ry * float(np.sin(a))) for a in angles]


STROKES: dict[str, list[Stroke]] = {
    "A": [[(0.0, 1.0), (0.5, 0.0), (1.0, 1.0)], [(0.22, 0.62), (0.78, 0.62)]],
    "2": [[*_arc(0.5, 0.28, 0.42, 0.28, 195, 385), (0.0, 1.0), (1.0, 1.0)]],
    "3": [_arc(0.5, 0.26, 0.4, 0.26, 200, 450), _arc(0.5, 0.74, 0.45, 0.26, 270, 520)],
    "4": [[(0.72, 1.0), (0.72, 0.0), (0.0, 0.68), (1.0, 0.68)]],
    "5": [[(0.92, 0.0), (0.15, 0.0), (0.12, 0.47)], _arc(0.5, 0.66, 0.42, 0.34, 215, 520)],
    "6": [_arc(0.5, 0.68, 0.42, 0.32, 0, 360), [(0.1, 0.64), (0.68, 0.0)]],
    "7": [[(0.0, 0.0), (1.0, 0.0), (0.35, 1.0)]],
    "8": [_arc(0.5, 0.24, 0.34, 0.24, 0, 360), _arc(0.5, 0.72, 0.42, 0.28, 0, 360)],
    "9": [_arc(0.5, 0.32, 0.42, 0.32, 0, 360), [(0.9, 0.36), (0.32, 1.0)]],
    "T": [[(0.0, 0.18), (0.2, 0.0), (0.2, 1.0)], _arc(0.7, 0.5, 0.28, 0.5, 0, 360)],
    "J": [[(0.4, 0.0), (0.9, 0.0)], [(0.78, 0.0), *_arc(0.42, 0.68, 0.36, 0.32, 0, 180)]],
    "Q": [_arc(0.5, 0.46, 0.46, 0.46, 0, 360), [(0.55, 0.68), (0.98, 1.04)]],
    "K": [[(0.08, 0.0), (0.08, 1.0)], [(0.92, 0.0), (0.08, 0.62)], [(0.34, 0.44), (0.96, 1.0)]],
}
WIDE = {"T": 1.45}  # "10" is two digits wide


def draw_rank(rank: str, height: int, thickness: int, width: float = 0.62, slant: float = 0.0) -> NDArray[np.uint8]:
    """The rank as white strokes on black, ``height`` pixels tall (a margin for the stroke included)."""
    inner_h = height - 2 * thickness
    inner_w = inner_h * width * WIDE.get(rank, 1.0)
    canvas_w = int(inner_w + abs(slant) * inner_h + 2 * thickness + 1)
    canvas = np.zeros((height, canvas_w), np.uint8)
    shift = thickness + max(0.0, -slant) * inner_h
    for stroke in STROKES[rank]:
        points = [(shift + (x * inner_w + slant * (1 - y) * inner_h), thickness + y * inner_h) for x, y in stroke]
        scaled = np.round(np.array(points) * 8).astype(np.int32)  # 3 fractional bits: smooth curves
        cv2.polylines(canvas, [scaled], False, 255, thickness, cv2.LINE_AA, shift=3)
    return canvas
