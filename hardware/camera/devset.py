"""A development set that looks like photos of a real deck, for the recogniser: an openly licensed French-pattern
design (``fixtures/decks/svg-cards``, LGPL-2.1; any other deck's 52 faces with ``load_deck``) composited into
photo-like frames.

Each frame is made from its seed alone: a procedural background (``wood``, ``felt`` or ``cloth``) under uneven light,
cards placed at any angle with a mild perspective tilt and a soft shadow, sometimes a hand reaching onto a card (over
its index corner or beside it), then what a camera does to a picture — specular glare on part of a card, sometimes a
bright (white) vignette that melts the edges of the cards near the frame's border into the background, motion or focus
blur, a white-balance shift, sensor noise and JPEG. Two kinds:

- ``calibration_set``: the 52 photos a studio takes of its deck, one card each, portrait 1200 × 1600 like a phone;
- ``scenes``: table frames (1280 × 720 by default) with 1–6 cards that do not overlap, each with its code and outline,
  marked ``hard`` where glare or a hand covers an index corner, a hand covers much of the card, a white vignette
  melts its edge or blur smears the frame: a reader may answer "unknown" there, never a wrong card. Each card also
  lists what it met (``marks``), so a reader's figures can be told per kind of frame (``Tally.kinds``).

Calibrate on one seed range and test on others, with other backgrounds and light: nothing is shared but the design.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import cv2
import numpy as np
from numpy.typing import NDArray

from hardware.codes import DECK

Image = NDArray[Any]
ROOT = Path(__file__).resolve().parents[2]
SVG_CARDS = ROOT / "fixtures" / "decks" / "svg-cards"
BACKGROUNDS = ("wood", "felt", "cloth")
PHONE = (1200, 1600)  # width, height
STUDIO = (1280, 720)


class Effects(TypedDict, total=False):
    """``scenes``' shares of frames with a hand, with a white vignette."""

    hand_share: float
    white_share: float


REAL_WORLD: Effects = {"hand_share": 0.25, "white_share": 0.2}  # what the third deck's test meets


# what a card in a scene may meet (``Placed.marks``); a card that met none is "plain"
MARKS = ("glare over index", "glare", "heavy blur", "hand over index", "hand", "white edge", "white vignette")


@dataclass(frozen=True)
class Placed:
    code: str
    quad: NDArray[Any]  # the card's corners in the frame, clockwise from the face's top-left (4 × 2, float32)
    hard: str = ""  # "glare" or "hand" over an index corner (or a hand over much of it), "white" edge, "blur": a
    # reader may say unknown here
    marks: tuple[str, ...] = ()  # what the card met (``MARKS``)


@dataclass(frozen=True)
class Scene:
    frame: Image
    cards: tuple[Placed, ...]
    background: str
    seed: int
    number: int = 0  # made from ``(seed, number)``


A_DECK = "a deck is a folder of its 52 faces, AS.png to KC.png"


def load_deck(directory: Path = SVG_CARDS) -> dict[str, Image]:
    """The 52 faces (BGRA, transparent outside the rounded card), by code; a missing or unreadable face is an error
    naming the file."""
    if not directory.is_dir():
        raise ValueError(f"{directory}: no such folder ({A_DECK})")
    faces = {}
    for code in DECK:
        path = directory / f"{code}.png"
        if not path.is_file():
            raise ValueError(f"{path}: missing ({A_DECK})")
        face = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if face is None or face.ndim != 3 or face.shape[2] != 4:
            raise ValueError(f"{path}: not a card face with transparency")
        faces[code] = face
    return faces


# ---- backgrounds ---------------------------------------------------------------------------------


def _smooth_noise(rng: np.random.Generator, size: tuple[int, int], cells: tuple[int, int]) -> Image:
    """Noise in 0–1, smooth over cells of the given count (height, width): resized random values."""
    small = rng.random((max(2, cells[0]), max(2, cells[1]))).astype(np.float32)
    smooth: Image = cv2.resize(small, (size[1], size[0]), interpolation=cv2.INTER_CUBIC)
    return smooth


def background(rng: np.random.Generator, kind: str, width: int, height: int) -> Image:
    size = (height, width)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    if kind == "wood":
        base = np.array([rng.uniform(40, 90), rng.uniform(80, 130), rng.uniform(120, 185)], np.float32)  # BGR
        angle = rng.uniform(0, math.pi)
        along = x * math.cos(angle) + y * math.sin(angle)
        across = -x * math.sin(angle) + y * math.cos(angle)
        warp = 25 * _smooth_noise(rng, size, (6, 6))
        grain = 0.5 + 0.5 * np.sin((across + warp) / rng.uniform(3, 9) + 2 * np.sin(along / 200))
        streaks = (
            _smooth_noise(rng, size, (height // 4, 3))
            if angle < math.pi / 4 or angle > 3 * math.pi / 4
            else (_smooth_noise(rng, size, (3, width // 4)))
        )
        shade = 0.75 + 0.2 * grain + 0.15 * streaks
    elif kind == "felt":
        base = [np.array(c, np.float32) for c in ((40, 110, 30), (110, 60, 20), (40, 30, 120), (60, 70, 40))][
            rng.integers(4)
        ] * rng.uniform(0.7, 1.2)
        shade = 0.9 + 0.1 * _smooth_noise(rng, size, (8, 8))
        fibres = rng.normal(0, 0.06, size).astype(np.float32)
        shade = shade + cv2.GaussianBlur(fibres, (0, 0), 0.8)
    else:  # cloth: a woven check
        base = rng.uniform(60, 200, 3).astype(np.float32)
        period = rng.uniform(4, 10)
        weave = np.sin(2 * math.pi * x / period) * np.sin(2 * math.pi * y / period)
        check = ((x // rng.uniform(30, 80) + y // rng.uniform(30, 80)) % 2).astype(np.float32)
        shade = 0.8 + 0.08 * weave + 0.12 * check + rng.normal(0, 0.03, size).astype(np.float32)
    image: Image = np.clip(shade[..., None] * base[None, None, :], 0, 255).astype(np.float32)
    return image


def uneven_light(rng: np.random.Generator, image: Image) -> Image:
    """A light that falls off across the frame, and a vignette."""
    height, width = image.shape[:2]
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, 2 * math.pi)
    ramp = ((x - width / 2) * math.cos(angle) + (y - height / 2) * math.sin(angle)) / max(width, height)
    light = 1 + rng.uniform(0.1, 0.45) * ramp
    radius = np.hypot((x - width / 2) / width, (y - height / 2) / height)
    light = light * (1 - rng.uniform(0.1, 0.35) * radius**2)
    lit: Image = image * light[..., None] * rng.uniform(0.75, 1.1)
    return lit


# ---- cards -------------------------------------------------------------------------------------


def card_quad(
    rng: np.random.Generator, face: Image, center: tuple[float, float], card_height: float, tilt: float
) -> NDArray[Any]:
    """Where the face's corners land: scaled to ``card_height``, turned by any angle, each corner moved by up to
    ``tilt`` × the card's height (a camera not quite square to the table)."""
    h, w = face.shape[:2]
    scale = card_height / h
    angle = rng.uniform(0, 2 * math.pi)
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]], np.float32) * scale
    turn = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]], np.float32)
    quad = corners @ turn.T + np.array(center, np.float32)
    quad += rng.uniform(-tilt, tilt, (4, 2)).astype(np.float32) * card_height
    return np.asarray(quad, np.float32)


def lay(frame: Image, face: Image, quad: NDArray[Any], shadow: tuple[float, float, float]) -> None:
    """The face warped onto ``quad`` of the frame (float BGR, changed in place), over its soft shadow; only the
    region the card and its shadow can reach is touched."""
    h, w = face.shape[:2]
    dx, dy, darkness = shadow
    spread = max(1.0, abs(dx) + abs(dy))
    reach = int(abs(dx) + abs(dy) + 3 * spread) + 2
    left, top = (np.floor(quad.min(axis=0)) - reach).astype(int)
    right, bottom = (np.ceil(quad.max(axis=0)) + reach).astype(int)
    left, top = max(0, int(left)), max(0, int(top))
    right, bottom = min(frame.shape[1], int(right)), min(frame.shape[0], int(bottom))
    if right <= left or bottom <= top:
        return
    region = frame[top:bottom, left:right]
    source = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, quad - np.array([left, top], np.float32))
    size = (right - left, bottom - top)
    warped = cv2.warpPerspective(face, matrix, size, flags=cv2.INTER_AREA if _shrinks(quad, h) else cv2.INTER_LINEAR)
    alpha = warped[..., 3:].astype(np.float32) / 255
    moved = cv2.warpAffine(alpha[..., 0], np.array([[1, 0, dx], [0, 1, dy]], np.float32), size)
    soft = cv2.GaussianBlur(moved, (0, 0), spread)[..., None]
    region *= 1 - darkness * soft
    region[:] = region * (1 - alpha) + warped[..., :3].astype(np.float32) * alpha


def _shrinks(quad: NDArray[Any], face_height: int) -> bool:
    return float(np.linalg.norm(quad[3] - quad[0])) < face_height


def glare(rng: np.random.Generator, frame: Image, at: tuple[float, float], size: float, strength: float) -> None:
    """A specular highlight: a soft white ellipse added to the picture (a glossy card under a studio light)."""
    reach = int(3 * size) + 1
    left, top = max(0, int(at[0]) - reach), max(0, int(at[1]) - reach)
    right, bottom = min(frame.shape[1], int(at[0]) + reach), min(frame.shape[0], int(at[1]) + reach)
    if right <= left or bottom <= top:
        return
    y, x = np.mgrid[top:bottom, left:right].astype(np.float32)
    angle = rng.uniform(0, math.pi)
    u = (x - at[0]) * math.cos(angle) + (y - at[1]) * math.sin(angle)
    v = -(x - at[0]) * math.sin(angle) + (y - at[1]) * math.cos(angle)
    spot = np.exp(-((u / size) ** 2 + (v / (size * rng.uniform(0.3, 0.8))) ** 2))
    frame[top:bottom, left:right] += strength * 255 * spot[..., None]


SKIN = ((180, 200, 240), (150, 178, 225), (115, 145, 200), (80, 110, 165), (55, 75, 120))  # BGR, light to dark


def hand(rng: np.random.Generator, frame: Image, tips: tuple[float, float], toward: float, card_height: float) -> Image:
    """A hand reaching onto the table from the frame's border: an arm, a palm, four fingers whose tips end near
    ``tips`` and a thumb, pointing against the direction ``toward`` (radians: where the arm lies, seen from the tips),
    in a skin tone with its own shading and a soft shadow; drawn into the frame (float BGR, in place). A card is
    88 mm high and a hand's fingers some 75 mm long: sizes follow ``card_height``. Returns the hand's cover (0–1)."""
    height, width = frame.shape[:2]
    size = card_height * rng.uniform(0.75, 1.05)
    out = np.array([math.cos(toward), math.sin(toward)])  # from the tips along the fingers to the palm and the arm
    across = np.array([-out[1], out[0]])
    finger_w, finger_l = 0.19 * size, 0.8 * size
    palm_w, palm_l = 0.9 * size, 1.0 * size
    palm = np.array(tips) + out * (finger_l + 0.45 * palm_l)
    mask = np.zeros((height, width), np.uint8)

    def point(p: NDArray[Any]) -> tuple[int, int]:
        return round(float(p[0]) * 4), round(float(p[1]) * 4)  # drawn with 2 fractional bits

    def stroke(start: NDArray[Any], end: NDArray[Any], thickness: float) -> None:
        cv2.line(mask, point(start), point(end), 255, max(1, int(thickness)), cv2.LINE_AA, 2)

    stroke(palm, palm + out * 2 * math.hypot(width, height), 0.7 * palm_w)  # the arm, out of the frame
    angle = math.degrees(math.atan2(out[1], out[0]))
    axes = (int(palm_l / 2 * 4), int(palm_w / 2 * 4))
    cv2.ellipse(mask, point(palm), axes, angle, 0, 360, 255, -1, cv2.LINE_AA, 2)
    knuckles = palm - out * 0.4 * palm_l
    for finger, length in enumerate(np.array([0.8, 1.0, 0.95, 0.75]) * rng.uniform(0.85, 1.1, 4)):
        offset = (finger - 1.5) * finger_w * rng.uniform(1.0, 1.15)
        base = knuckles + across * offset
        bend = rng.uniform(-0.12, 0.12)  # a finger is seldom quite straight
        tip = base - out * finger_l * length + across * (offset * rng.uniform(0.1, 0.35) + bend * finger_l)
        stroke(base, tip, finger_w * rng.uniform(0.9, 1.05))
    side = 1 if rng.random() < 0.5 else -1  # which hand: the thumb on one side or the other
    thumb = palm + across * side * 0.42 * palm_w - out * 0.1 * palm_l
    stroke(thumb, thumb + (-out * 0.55 + across * side * 0.55) * finger_l * 0.75, 1.2 * finger_w)
    cover = cv2.GaussianBlur(mask.astype(np.float32) / 255, (0, 0), 1.0)
    # a soft shadow on what lies under it, then the hand: rounder (darker) towards its edges, blotchy, lit as it is
    shift = np.array([[1, 0, rng.uniform(-0.06, 0.06) * size], [0, 1, rng.uniform(0.0, 0.08) * size]], np.float32)
    shadow = cv2.GaussianBlur(cv2.warpAffine(cover, shift, (width, height)), (0, 0), 0.05 * size)
    frame *= (1 - rng.uniform(0.25, 0.5) * shadow)[..., None]
    inside = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 5)
    blotches = 0.08 * (_smooth_noise(rng, (height, width), (9, 16)) - 0.5)
    shade = 0.7 + 0.3 * np.clip(inside / (0.1 * size), 0, 1) + blotches
    skin = np.array(SKIN[int(rng.integers(len(SKIN)))], np.float32) * rng.uniform(0.92, 1.08, 3).astype(np.float32)
    frame[:] = frame * (1 - cover[..., None]) + (shade[..., None] * skin[None, None, :]) * cover[..., None]
    return cover


def white_vignette(rng: np.random.Generator, frame: Image) -> Image:
    """A bright vignette: the picture fades to white towards its border (a webcam's processing, a bright window or a
    pale cloth beyond the table), so a card near the border melts into its surround; drawn into the frame (float BGR,
    in place). Returns how far each pixel faded (0–1)."""
    height, width = frame.shape[:2]
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    cx, cy = width * rng.uniform(0.4, 0.6), height * rng.uniform(0.4, 0.6)
    reach = np.hypot((x - cx) / (width / 2), (y - cy) / (height / 2)) / math.sqrt(2)  # 0 at the centre, ~1 in corners
    start = rng.uniform(0.3, 0.55)
    fade = rng.uniform(0.75, 1.0) * np.clip((reach - start) / (1 - start), 0, 1) ** rng.uniform(0.8, 1.6)
    frame[:] = frame * (1 - fade[..., None]) + rng.uniform(235, 255) * fade[..., None]
    return np.asarray(fade, np.float32)


def on_face(quad: NDArray[Any], u: tuple[float, float], v: tuple[float, float], steps: int = 8) -> NDArray[Any]:
    """Points spread over a part of the card's face (``u`` across, ``v`` down, as shares of the face), in the frame."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_frame = cv2.getPerspectiveTransform(unit, quad.astype(np.float32))
    grid = np.stack(np.meshgrid(np.linspace(*u, steps), np.linspace(*v, steps)), axis=-1).reshape(-1, 1, 2)
    return np.asarray(cv2.perspectiveTransform(grid.astype(np.float32), to_frame).reshape(-1, 2))


def _sample(image: Image, points: NDArray[Any]) -> NDArray[Any]:
    x = np.clip(np.round(points[:, 0]).astype(int), 0, image.shape[1] - 1)
    y = np.clip(np.round(points[:, 1]).astype(int), 0, image.shape[0] - 1)
    return np.asarray(image[y, x])


def index_regions(quad: NDArray[Any]) -> list[NDArray[Any]]:
    """Points over the two corners where a deck prints its index (the top-left quarter-width, 30 % of the height, and
    the same turned at the bottom-right: where any of the fixtures' designs has it, jumbo indices too)."""
    return [on_face(quad, (0.02, 0.24), (0.02, 0.30)), on_face(quad, (0.76, 0.98), (0.70, 0.98))]


def camera(rng: np.random.Generator, frame: Image, blur: float, motion: int) -> Image:
    """What the camera does: blur (focus or motion), a white-balance shift, sensor noise, then JPEG."""
    if motion > 1:
        kernel = np.zeros((motion, motion), np.float32)
        kernel[motion // 2, :] = 1 / motion
        turn = cv2.getRotationMatrix2D((motion / 2 - 0.5, motion / 2 - 0.5), rng.uniform(0, 180), 1)
        frame = cv2.filter2D(frame, -1, cv2.warpAffine(kernel, turn, (motion, motion)))
    if blur > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), blur)
    frame = frame * rng.uniform(0.88, 1.12, 3).astype(np.float32)[None, None, :]
    frame = frame + rng.standard_normal(frame.shape, dtype=np.float32) * np.float32(rng.uniform(1.5, 6))
    picture = np.clip(frame, 0, 255).astype(np.uint8)
    ok, encoded = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(60, 93))])
    assert ok
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    assert decoded is not None
    return np.asarray(decoded)


def _corners_of_index(quad: NDArray[Any]) -> list[NDArray[Any]]:
    """Roughly where the two index corners lie in the frame (12 % in from each index corner)."""
    return [quad[0] + 0.12 * (quad[2] - quad[0]), quad[2] + 0.12 * (quad[0] - quad[2])]


# ---- the two sets --------------------------------------------------------------------------------


def calibration_set(faces: dict[str, Image], seed: int, kind: str = "wood") -> dict[str, Image]:
    """One photo per card, as a studio would take them: the card filling much of a phone's portrait frame on the
    studio's own table, any rotation, a mild tilt, soft light; no glare over an index, little blur."""
    photos = {}
    for index, code in enumerate(DECK):
        rng = np.random.default_rng([seed, index])
        width, height = PHONE
        frame = background(rng, kind, width, height)
        face = faces[code]
        center = (width / 2 + rng.uniform(-80, 80), height / 2 + rng.uniform(-80, 80))
        quad = card_quad(rng, face, center, rng.uniform(0.42, 0.55) * height, 0.03)
        lay(frame, face, quad, (rng.uniform(-12, 12), rng.uniform(-12, 12), rng.uniform(0.2, 0.45)))
        frame = uneven_light(rng, frame)
        photos[code] = camera(rng, frame, rng.uniform(0.0, 0.8), 0)
    return photos


def scenes(
    faces: dict[str, Image],
    seed: int,
    count: int,
    size: tuple[int, int] = STUDIO,
    cards: tuple[int, int] = (1, 6),
    kinds: Sequence[str] = BACKGROUNDS,
    hard_share: float = 0.15,
    hand_share: float = 0.0,
    white_share: float = 0.0,
    first: int = 0,
) -> Iterator[Scene]:
    """``count`` table frames, numbered from ``first``, each made from ``(seed, number)``: 1–6 cards of distinct codes
    that do not overlap; a hand in ``hand_share`` of them (over a card's index corner in half of those, at a corner
    without an index in the other half), a white vignette in ``white_share`` (``REAL_WORLD``: the shares the third
    deck's test uses). The hand and the vignette draw from a stream of their own (``(seed, number, 1)``), so the rest
    of each frame is what it is without them: with both shares 0 (the default) the frames are those the first two
    decks' figures were measured on."""
    width, height = size
    for number in range(first, first + count):
        rng = np.random.default_rng([seed, number])
        extra = np.random.default_rng([seed, number, 1])
        kind = str(kinds[int(rng.integers(len(kinds)))])
        frame = background(rng, kind, width, height)
        card_height = rng.uniform(0.26, 0.4) * height
        codes = [DECK[i] for i in rng.choice(len(DECK), int(rng.integers(cards[0], cards[1] + 1)), replace=False)]
        placed: list[Placed] = []
        centers: list[tuple[float, float]] = []
        reach = 0.62 * card_height  # half the card's diagonal: cards this far apart cannot touch
        for code in codes:
            for _try in range(60):
                center = (rng.uniform(reach, width - reach), rng.uniform(reach, height - reach))
                if all(math.dist(center, other) > 2.05 * reach for other in centers):
                    break
            else:
                continue  # no room left on this table
            centers.append(center)
            quad = card_quad(rng, faces[code], center, card_height * rng.uniform(0.93, 1.07), 0.04)
            lay(frame, faces[code], quad, (rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(0.15, 0.5)))
            placed.append(Placed(code, quad))
        hards = [""] * len(placed)
        marks: list[list[str]] = [[] for _ in placed]
        if placed and extra.random() < hand_share:
            _hand_on(extra, frame, placed, card_height, hards, marks)
        frame = uneven_light(rng, frame)
        if rng.random() < hard_share and placed:  # glare right over one card's index corner
            victim = int(rng.integers(len(placed)))
            glare(rng, frame, tuple(_corners_of_index(placed[victim].quad)[0]), 0.18 * card_height, 0.9)
            hards[victim] = hards[victim] or "glare"
            marks[victim].append("glare over index")
        elif placed and rng.random() < 0.4:  # glare somewhere on a card, not over its index
            victim = int(rng.integers(len(placed)))
            middle = placed[victim].quad.mean(axis=0)
            glare(rng, frame, (float(middle[0]), float(middle[1])), 0.25 * card_height, rng.uniform(0.3, 0.7))
            marks[victim].append("glare")
        if placed and extra.random() < white_share:
            fade = white_vignette(extra, frame)
            for at, card in enumerate(placed):
                edge = on_face(card.quad, (-0.04, 1.04), (-0.03, 1.03), 12)  # the card's outline and just beyond
                melted = float(_sample(fade, edge).max())
                if melted >= 0.5:  # some of its edge and surround faded half way to white or more: melting into it
                    hards[at] = hards[at] or "white"
                    marks[at].append("white edge")
                elif melted > 0.05:
                    marks[at].append("white vignette")
        heavy = rng.random() < hard_share / 2
        blur = rng.uniform(2.5, 4.0) if heavy else rng.uniform(0.0, 1.0)
        motion = int(rng.integers(9, 15)) if heavy and rng.random() < 0.5 else int(rng.integers(0, 4))
        if heavy:
            hards = [hard or "blur" for hard in hards]
            marks = [[*kinds_met, "heavy blur"] for kinds_met in marks]
        marked = tuple(
            Placed(card.code, card.quad, hard, tuple(met)) for card, hard, met in zip(placed, hards, marks, strict=True)
        )
        yield Scene(camera(rng, frame, blur, motion), marked, kind, seed, number)


def _hand_on(
    rng: np.random.Generator,
    frame: Image,
    placed: list[Placed],
    card_height: float,
    hards: list[str],
    marks: list[list[str]],
) -> None:
    """A hand reaching onto one card: its fingertips over one of its index corners, or over a corner without an index
    (the top-right or bottom-left of the face); then each card it covers is marked by what it covers — any of an
    index corner's region, or over a quarter of the face: hard ("hand")."""
    victim = placed[int(rng.integers(len(placed)))]
    over_index = rng.random() < 0.5
    corner = (0, 2)[int(rng.integers(2))] if over_index else (1, 3)[int(rng.integers(2))]
    centre = victim.quad.mean(axis=0)
    depth = rng.uniform(0.12, 0.2) if over_index else rng.uniform(0.04, 0.12)  # in from the corner, along the diagonal
    tips = victim.quad[corner] + depth * (centre - victim.quad[corner]) * 2
    outward = victim.quad[corner] - centre
    toward = math.atan2(float(outward[1]), float(outward[0])) + rng.uniform(-0.5, 0.5)
    cover = hand(rng, frame, (float(tips[0]), float(tips[1])), toward, card_height)
    for number, card in enumerate(placed):
        on_index = max(float((_sample(cover, region) > 0.5).mean()) for region in index_regions(card.quad))
        on_card = float((_sample(cover, on_face(card.quad, (0.0, 1.0), (0.0, 1.0), 16)) > 0.5).mean())
        if on_index > 0.05 or on_card > 0.25:
            hards[number] = hards[number] or "hand"
            marks[number].append("hand over index" if on_index > 0.05 else "hand")
        elif on_card > 0:
            marks[number].append("hand")


# ---- scoring a reader on the set -----------------------------------------------------------------


@dataclass
class Tally:
    """How a reader did on a set's cards: each card read right, left unknown, read wrong, or never found (no outline);
    an outline where there is no card that was read as a card counts as a ``phantom`` (a second outline on a card
    read as another card too; read as the same card, a ``duplicate``). ``hard``: the same for the
    cards marked hard (glare over an index, heavy blur), which are not in the other counts."""

    right: int = 0
    unknown: int = 0
    wrong: int = 0
    missed: int = 0
    phantom: int = 0
    duplicate: int = 0  # a second outline on a card, read as that same card
    hard_right: int = 0
    hard_unknown: int = 0
    hard_wrong: int = 0
    frames: int = 0
    confusions: list[tuple[str, str, float]] = field(default_factory=list)  # (truth, read, confidence) of each wrong
    # per kind of card (each of its ``marks``, or "plain"): right, unknown, wrong and missed (not found), hard or not
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    # each wrong read again: truth, read, confidence, the frame's number (``Scene.number``) and the card's marks
    wrongs: list[tuple[str, str, float, int, tuple[str, ...]]] = field(default_factory=list)

    def _kind(self, card: Placed, verdict: str) -> None:
        for mark in card.marks or ("plain",):
            counts = self.kinds.setdefault(mark, {"right": 0, "unknown": 0, "wrong": 0, "missed": 0})
            counts[verdict] += 1

    @property
    def cards(self) -> int:
        return self.right + self.unknown + self.wrong + self.missed

    def as_dict(self) -> dict[str, Any]:
        share = self.right / self.cards if self.cards else 0.0
        return {
            "frames": self.frames, "cards": self.cards, "right": self.right, "unknown": self.unknown,
            "wrong": self.wrong, "missed": self.missed, "phantom": self.phantom, "duplicate": self.duplicate,
            "right_share": round(share, 4),
            "hard": {"right": self.hard_right, "unknown": self.hard_unknown, "wrong": self.hard_wrong},
            "kinds": {kind: self.kinds[kind] for kind in ("plain", *MARKS) if kind in self.kinds},
        }  # fmt: skip


def score(read: Callable[[Image], Sequence[Any]], sets: Iterator[Scene]) -> Tally:
    """Run ``read`` (frame → detections with ``card`` and ``outline``) on each scene and tally it against the truth: a
    detection belongs to the card whose centre is nearest its own, within a quarter of the card's height."""
    tally = Tally()
    for scene in sets:
        tally.frames += 1
        taken: set[int] = set()
        for detection in read(scene.frame):
            centre = np.mean(np.array(detection.outline, np.float32), axis=0)
            distances = [float(np.linalg.norm(p.quad.mean(axis=0) - centre)) for p in scene.cards]
            nearest = int(np.argmin(distances)) if distances else -1
            height = (
                float(np.linalg.norm(scene.cards[nearest].quad[3] - scene.cards[nearest].quad[0])) if distances else 0
            )
            if nearest < 0 or distances[nearest] > 0.25 * height:
                tally.phantom += detection.card is not None
                continue
            if nearest in taken:  # a second outline on a card already seen: harmless only if it reads the same card
                tally.duplicate += detection.card == scene.cards[nearest].code
                tally.phantom += detection.card not in (None, scene.cards[nearest].code)
                continue
            taken.add(nearest)
            truth = scene.cards[nearest]
            verdict = "unknown" if detection.card is None else "right" if detection.card == truth.code else "wrong"
            if verdict == "wrong":
                tally.confusions.append((truth.code, detection.card, float(detection.confidence)))
                seen = (truth.code, detection.card, float(detection.confidence), scene.number, truth.marks)
                tally.wrongs.append(seen)
            name = f"hard_{verdict}" if truth.hard else verdict
            setattr(tally, name, getattr(tally, name) + 1)
            tally._kind(truth, verdict)
        unseen = [p for i, p in enumerate(scene.cards) if i not in taken]
        tally.missed += sum(1 for p in unseen if not p.hard)
        tally.hard_unknown += sum(1 for p in unseen if p.hard)  # not found is not read wrong
        for p in unseen:
            tally._kind(p, "missed")
    return tally
