"""A synthetic camera: card faces drawn by this project, laid on felt, filmed with a bad lens.

Card faces use the project's own glyphs: ranks in OpenCV's built-in Hershey vector fonts, suits
as polygons and circles. A ``GlyphStyle`` picks the font, stroke and suit proportions, so tests
can calibrate on one style and recognise another. ``Scene`` settings (felt colour, lighting,
perspective, blur, noise) make frames from mild to hopeless, each with its ground truth.
"""

from __future__ import annotations

import functools
import math
import random
import threading
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from hardware.codes import DECK
from hardware.sim.glyphs import draw_rank
from hardware.sim.serial_shoe import shuffled_deck

Image = NDArray[Any]  # what OpenCV hands back: its stubs type every array loosely
CARD_W, CARD_H = 250, 350  # the flat face, in pixels (63 × 88 mm at ~4 px/mm)
RED = (40, 30, 200)  # BGR
BLACK = (30, 25, 25)


@dataclass(frozen=True)
class GlyphStyle:
    thickness: int = 3  # rank stroke, pixels on the flat face
    width: float = 0.62  # rank glyph width / height
    slant: float = 0.0
    lobe: float = 0.23  # radius of the heart/club/spade lobes, as a share of the suit's size
    stem: float = 0.18  # half-width of the club/spade stem at its foot
    paper: tuple[int, int, int] = (245, 245, 242)


STYLES = {
    "calibration": GlyphStyle(),
    "bold": GlyphStyle(thickness=4, width=0.58, slant=0.1, lobe=0.22, stem=0.17, paper=(236, 240, 244)),
    "light": GlyphStyle(thickness=2, width=0.68, slant=-0.06, lobe=0.22, stem=0.19, paper=(250, 248, 240)),
}


def _suit_mask(suit: str, size: int, style: GlyphStyle) -> Image:
    """The suit's shape, white on black, in a ``size`` × ``size`` square."""
    mask = np.zeros((size, size), np.uint8)
    s, c = size, size / 2
    lobe = max(1, round(style.lobe * s))

    def heart(top: float, bottom: float, flip: bool) -> None:
        y_lobes = top + lobe if not flip else bottom - lobe
        y_tip = bottom if not flip else top
        for x in (c - lobe * 0.9, c + lobe * 0.9):
            cv2.circle(mask, (round(x), round(y_lobes)), lobe, 255, -1, cv2.LINE_AA)
        side = 1 if not flip else -1
        points = np.array(
            [[c - 1.8 * lobe, y_lobes + side * lobe * 0.3], [c + 1.8 * lobe, y_lobes + side * lobe * 0.3],
             [c, y_tip]], np.int32,
        )  # fmt: skip
        cv2.fillPoly(mask, [points], 255, cv2.LINE_AA)

    def stem() -> None:
        half = style.stem * s
        points = np.array([[c, s * 0.55], [c - half, s * 0.98], [c + half, s * 0.98]], np.int32)
        cv2.fillPoly(mask, [points], 255, cv2.LINE_AA)

    if suit == "D":
        cv2.fillPoly(mask, [np.array([[c, 1], [s * 0.86, c], [c, s - 2], [s * 0.14, c]], np.int32)], 255, cv2.LINE_AA)
    elif suit == "H":
        heart(s * 0.1, s * 0.95, flip=False)
    elif suit == "S":
        heart(s * 0.02, s * 0.78, flip=True)
        stem()
    elif suit == "C":
        for x, y in ((c, lobe + 1), (c - lobe * 1.2, s * 0.56), (c + lobe * 1.2, s * 0.56)):
            cv2.circle(mask, (round(x), round(y)), lobe, 255, -1, cv2.LINE_AA)
        cv2.circle(mask, (round(c), round(s * 0.45)), round(lobe * 0.45), 255, -1, cv2.LINE_AA)  # joins the lobes
        stem()
    else:
        raise ValueError(f"unknown suit {suit!r}")
    return mask


def _stamp(canvas: Image, mask: Image, x: int, y: int, colour: tuple[int, int, int]) -> None:
    h, w = mask.shape
    region = canvas[y : y + h, x : x + w].astype(np.float32)
    alpha = (mask.astype(np.float32) / 255)[..., None]
    canvas[y : y + h, x : x + w] = (region * (1 - alpha) + np.array(colour, np.float32) * alpha).astype(np.uint8)


def card_face(code: str, style: GlyphStyle = STYLES["calibration"]) -> Image:
    """The flat face of a card (``CARD_H`` × ``CARD_W``): indexes in two corners, a big suit in the middle."""
    rank, suit = code[0], code[1]
    colour = RED if suit in "HD" else BLACK
    face = np.full((CARD_H, CARD_W, 3), style.paper, np.uint8)
    corner = np.full((96, 56, 3), style.paper, np.uint8)
    glyph = draw_rank(rank, 34, style.thickness, style.width, style.slant)
    glyph = glyph[:, : min(glyph.shape[1], 54)]
    _stamp(corner, glyph, (56 - glyph.shape[1]) // 2, 8, colour)
    _stamp(corner, _suit_mask(suit, 36, style), 10, 54, colour)
    face[8:104, 6:62] = corner
    face[CARD_H - 104 : CARD_H - 8, CARD_W - 62 : CARD_W - 6] = corner[::-1, ::-1]
    _stamp(face, _suit_mask(suit, 110, style), (CARD_W - 110) // 2, (CARD_H - 110) // 2, colour)
    if rank in "JQK":
        big = draw_rank(rank, 60, style.thickness + 2, style.width, style.slant)
        _stamp(face, big, (CARD_W - big.shape[1]) // 2, CARD_H // 2 + 62, colour)
    return face


@dataclass(frozen=True)
class Placed:
    """Ground truth: a card and where its corners landed (TL, TR, BR, BL of the upright face)."""

    code: str
    quad: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Scene:
    width: int = 1280
    height: int = 720
    felt: tuple[int, int, int] = (40, 110, 35)  # BGR
    card_width: tuple[float, float] = (150, 210)  # pixels, in the frame
    tilt: float = 0.06  # perspective: corners move by up to this share of the card's size
    blur: float = 0.8  # Gaussian sigma, pixels
    noise: float = 4.0  # standard deviation, grey levels
    light: tuple[float, float] = (0.85, 1.1)  # brightness range across the frame
    style: GlyphStyle = field(default_factory=lambda: STYLES["calibration"])


MODERATE = Scene()
HEAVY = Scene(blur=4.5, noise=38.0, light=(0.25, 0.5), card_width=(70, 95), tilt=0.18)
FELTS = {"green": (40, 110, 35), "blue": (120, 70, 30), "red": (40, 40, 120), "grey": (90, 95, 95)}


@functools.lru_cache(maxsize=8)
def _felt(felt: tuple[int, int, int], width: int, height: int) -> NDArray[Any]:
    """The cloth, with its woven grain (the same in every frame: it is the same table)."""
    base = np.empty((height, width, 3), np.float32)
    base[:] = felt
    grain = np.random.default_rng(sum(felt)).normal(0, 6, (height // 4, width // 4)).astype(np.float32)
    base += cv2.resize(grain, (width, height))[..., None]
    base.setflags(write=False)
    return base


def _quad(scene: Scene, rng: random.Random, taken: list[tuple[float, float, float]]) -> NDArray[Any] | None:
    width = rng.uniform(*scene.card_width)
    height = width * CARD_H / CARD_W
    radius = math.hypot(width, height) / 2 * (1 + 2 * scene.tilt)  # tilted corners reach further out
    for _ in range(200):
        cx = rng.uniform(radius + 4, scene.width - radius - 4)
        cy = rng.uniform(radius + 4, scene.height - radius - 4)
        if all(math.hypot(cx - x, cy - y) > radius + r + 6 for x, y, r in taken):
            break
    else:
        return None
    taken.append((cx, cy, radius))
    angle = rng.uniform(0, 2 * math.pi)
    corners = []
    for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        x = dx * width / 2 + rng.uniform(-scene.tilt, scene.tilt) * width
        y = dy * height / 2 + rng.uniform(-scene.tilt, scene.tilt) * height
        corners.append((cx + x * math.cos(angle) - y * math.sin(angle), cy + x * math.sin(angle) + y * math.cos(angle)))
    return np.array(corners, np.float32)


def layout(codes: list[str], scene: Scene = MODERATE, seed: int = 0) -> list[Placed]:
    """Where the cards land on the table: apart from each other, any rotation, some tilt."""
    rng = random.Random(seed)
    placed: list[Placed] = []
    taken: list[tuple[float, float, float]] = []
    for code in codes:
        quad = _quad(scene, rng, taken)
        if quad is not None:
            placed.append(Placed(code, tuple((float(x), float(y)) for x, y in quad)))
    return placed


def compose(placed: list[Placed], scene: Scene = MODERATE, seed: int = 0) -> Image:
    """One camera frame of the placed cards: felt, faces, lighting, blur and noise (``seed``: this frame's)."""
    rng = random.Random(seed)
    frame: NDArray[Any] = _felt(scene.felt, scene.width, scene.height).copy()
    flat = np.array([[0, 0], [CARD_W - 1, 0], [CARD_W - 1, CARD_H - 1], [0, CARD_H - 1]], np.float32)
    for card in placed:
        quad = np.array(card.quad, np.float32)
        x0, y0 = np.floor(quad.min(axis=0)).astype(int)
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, scene.width), min(y1, scene.height)
        matrix = cv2.getPerspectiveTransform(flat, quad - np.array([x0, y0], np.float32))
        size = (x1 - x0, y1 - y0)  # only the card's own box of the frame is touched
        warped = cv2.warpPerspective(card_face(card.code, scene.style), matrix, size, flags=cv2.INTER_LINEAR)
        mask = cv2.warpPerspective(np.full((CARD_H, CARD_W), 255, np.uint8), matrix, size, flags=cv2.INTER_LINEAR)
        alpha = (mask.astype(np.float32) / 255)[..., None]
        region = frame[y0:y1, x0:x1]
        region += alpha * (warped.astype(np.float32) - region)
    low, high = scene.light
    angle = rng.uniform(0, 2 * math.pi)
    xs, ys = _grid(scene.width, scene.height)
    tilt = 0.5 * (high - low) / math.sqrt(2)  # the light falls off across the frame at ``angle``
    gradient = cv2.addWeighted(xs, tilt * math.cos(angle), ys, tilt * math.sin(angle), (low + high) / 2)
    frame *= gradient[..., None]
    if scene.blur > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), scene.blur)
    if scene.noise > 0:  # sensor noise: zero mean, ``noise`` grey levels of deviation (uniform: cheap to draw)
        noise = np.random.default_rng(rng.getrandbits(32)).random(frame.shape, dtype=np.float32)
        noise -= 0.5
        noise *= scene.noise * math.sqrt(12)
        frame += noise
    image: Image = np.clip(frame, 0, 255, out=frame).astype(np.uint8)
    return image


@functools.lru_cache(maxsize=4)
def _grid(width: int, height: int) -> tuple[NDArray[Any], NDArray[Any]]:
    xs, ys = np.meshgrid(np.linspace(-1, 1, width, dtype=np.float32), np.linspace(-1, 1, height, dtype=np.float32))
    return xs, ys


def render(codes: list[str], scene: Scene = MODERATE, seed: int = 0) -> tuple[Image, list[Placed]]:
    """A frame with the cards laid on felt, and where each landed."""
    placed = layout(codes, scene, seed)
    return compose(placed, scene, seed), placed


def calibration_photos(seed: int = 0) -> dict[str, Image]:
    """One photo per card of the calibration deck: the card alone on the table, any rotation, mild tilt."""
    photos = {}
    for index, code in enumerate(DECK):
        scene = Scene(width=640, height=480, card_width=(200, 240), tilt=0.04, blur=0.6, noise=3.0,
                      felt=FELTS["green"], light=(0.9, 1.05))  # fmt: skip
        photos[code], _ = render([code], scene, seed=seed * 1000 + index)
    return photos


class SyntheticCamera:
    """A camera over a table where cards are dealt face up: ``read()`` like ``cv2.VideoCapture``.

    ``deal(code)`` puts a card in the next free place; ``clear()`` sweeps the table. Every frame is
    rendered afresh (new noise), so a recogniser sees what a real camera would: the same cards,
    never quite the same pixels.
    """

    def __init__(self, scene: Scene = MODERATE, seed: int = 0, places: int = 3) -> None:
        self.scene = scene
        self.seed = seed
        self.frames = 0
        self._places = [p.quad for p in layout(["AS"] * places, scene, seed)]
        if len(self._places) < places:
            raise ValueError(f"only {len(self._places)} cards of this size fit on a {scene.width}×{scene.height} table")
        self.places = places
        self._cards: list[str] = []
        self._lock = threading.Lock()
        self._open = True

    def deal(self, code: str) -> None:
        with self._lock:
            if len(self._cards) >= len(self._places):
                raise ValueError(f"the table holds {len(self._places)} cards; clear it first")
            self._cards.append(code)

    def clear(self) -> None:
        with self._lock:
            self._cards = []

    def isOpened(self) -> bool:
        return self._open

    def read(self) -> tuple[bool, Image | None]:
        if not self._open:
            return False, None
        with self._lock:
            placed = [Placed(code, quad) for code, quad in zip(self._cards, self._places, strict=False)]
        self.frames += 1
        return True, compose(placed, self.scene, self.seed * 1_000_003 + self.frames)

    def release(self) -> None:
        self._open = False


def deal_forever(camera: SyntheticCamera, seed: int, interval: float, stop: threading.Event) -> None:
    """Deal shuffled decks onto ``camera`` one card every ``interval`` seconds, sweeping the table when it is full."""
    deck_number = 0
    while not stop.is_set():
        for index, code in enumerate(shuffled_deck(seed + deck_number)):
            if stop.wait(interval):
                return
            if index % camera.places == 0:
                camera.clear()  # the dealer sweeps the table
            camera.deal(code)
        deck_number += 1
