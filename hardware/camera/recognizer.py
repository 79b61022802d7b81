"""Reading face-up cards in a camera frame with OpenCV.

1. **Outlines**: cards are the bright, paper-coloured regions on the felt (Otsu threshold on the
   grey image); each outer contour with four corners (or its minimum-area rectangle) and a card's
   proportions is a card.
2. **Flat card**: the outline is warped to an upright ``CARD_W`` × ``CARD_H`` face. A card lies
   either way up, and both top corners of an upright face... no: a card's index sits in its
   top-left and bottom-right corners, so either way up the top-left corner holds an index.
3. **Index**: the corner's ink (darker than the paper, by Otsu) splits into two bands of rows:
   the rank above, the suit below. Each glyph is letter-boxed to a square, normalised, and
   correlated with the templates; the suit's ink colour (red or black) restricts the suits.
4. **Confidence** is the lower of the rank's and the suit's scores, each less a share of how close
   the runner-up came. Below the threshold the answer is explicitly unknown (``card=None``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from hardware.codes import DECK, RANKS, SUITS

T = TypeVar("T")
Image = NDArray[Any]  # what OpenCV hands back: its stubs type every array loosely
Vector = NDArray[Any]  # a unit float32 vector
CARD_W, CARD_H = 250, 350
RATIO = CARD_W / CARD_H
GLYPH = 32  # glyphs are compared as GLYPH × GLYPH squares
RED_SUITS = "HD"
CORNER = (0.28, 0.33)  # the index corner, as shares of the face's width and height
DEFAULT_THRESHOLD = 0.62
CLARITY = (9.0, 13.0)  # ink contrast / paper noise: below the first, too murky to trust; above the second, clear
SOFTNESS = (2.2, 2.6)  # blur on the flat face (px): up to the first, sharp enough; beyond the second, too soft
CLOSINGS = (5, 21)  # px: the gaps in a card's bright region closed, first look and second
MARGIN_WEIGHT = 5.0  # a runner-up within 0.024 of the best keeps the confidence under the threshold


@dataclass(frozen=True)
class Glyphs:
    rank: Vector
    suit: Vector
    redness: float  # how red the suit's ink is: (R − max(G, B)) / paper brightness
    rank_crop: NDArray[Any]  # the ink's darkness around each glyph, before resizing
    suit_crop: NDArray[Any]
    clarity: float  # ink contrast over the paper's noise in the corner
    softness: float  # the width of the ink's edges, in face pixels (the blur of the lens and of a small image)


@dataclass(frozen=True)
class Detection:
    card: str | None  # None: a card is there but it could not be read with confidence
    confidence: float
    outline: tuple[tuple[float, float], ...]  # the card's corners in the frame
    box: tuple[int, int, int, int]  # x, y, width, height
    evidence: Image  # the flattened face the decision was made on

    def to_dict(self) -> dict[str, object]:
        return {"card": self.card, "confidence": round(self.confidence, 3), "box": list(self.box)}


class RecognitionError(ValueError):
    pass


# ---- outlines and flat faces --------------------------------------------------------------


def find_cards(
    frame: Image, grey: Image | None = None, min_share: float = 0.0015, contours: bool = False, surround: bool = True
) -> list[Any]:
    """The four corners of each card in the frame (clockwise from top-left of the image); with ``contours``, each
    with its outline's every point, as ``(quad, contour)``.

    Cards are the bright regions of one Otsu threshold, closed over small gaps; a card whose bright region is broken
    up (a court card on a pale cloth: its picture cuts its thin white margin into pieces) is found by a second look
    at the same regions closed over wider gaps; with ``surround``, a card in a bright part of the table (a white
    vignette, a lamp's pool of light) by a third look at what stands above the table's own light. A later look
    keeps only cards that do not overlap one already found."""
    grey = cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if grey is None else grey, (5, 5), 0)
    _, bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    found: list[tuple[NDArray[Any], Any]] = []
    looks = [(bright, CLOSINGS[0]), (bright, CLOSINGS[1])]
    if surround:
        looks.append((_over_surround(grey), CLOSINGS[0]))
    for mask, size in looks:
        closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((size, size), np.uint8))
        for quad, contour in _card_regions(frame, closed, min_share, contours):
            centre = quad.mean(axis=0)
            if any(
                cv2.pointPolygonTest(other.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False) >= 0
                or cv2.pointPolygonTest(quad.reshape(-1, 1, 2), tuple(map(float, other.mean(axis=0))), False) >= 0
                for other, _ in found
            ):
                continue
            found.append((quad, contour))
    return [(quad, contour) if contours else quad for quad, contour in found]


def _over_surround(grey: Image) -> Image:
    """What stands out above the table around it: the table's own light (a lamp's fall-off, a bright vignette) is
    taken away before one threshold, so a card in a bright corner is found as one in the middle is. The table's light
    is the frame opened by a disc wider than a card (the cards taken out), measured at an eighth of its size."""
    small = cv2.resize(grey, (grey.shape[1] // 8, grey.shape[0] // 8), interpolation=cv2.INTER_AREA)
    width = max(3, (min(small.shape[:2]) // 2) | 1)
    table = cv2.morphologyEx(small, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width)))
    table = cv2.resize(cv2.GaussianBlur(table, (0, 0), 3), grey.shape[::-1], interpolation=cv2.INTER_LINEAR)
    above = cv2.subtract(grey, table)
    _, mask = cv2.threshold(above, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return mask


def _card_regions(frame: Image, mask: Image, min_share: float, contours: bool) -> list[tuple[NDArray[Any], Any]]:
    """Each card-shaped outer region of ``mask``: its four corners and its outline."""
    chain = cv2.CHAIN_APPROX_NONE if contours else cv2.CHAIN_APPROX_SIMPLE
    outlines, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, chain)
    min_area = min_share * frame.shape[0] * frame.shape[1]
    quads: list[tuple[NDArray[Any], Any]] = []
    for contour in outlines:
        area = cv2.contourArea(contour)
        if area < min_area:
            continue
        _x, _y, width, height = cv2.boundingRect(contour)
        if width >= frame.shape[1] - 2 and height >= frame.shape[0] - 2:
            continue  # a region as large as the frame is the table (a plain frame, all one side of the threshold)
        hull = cv2.convexHull(contour)
        approx = cv2.approxPolyDP(hull, 0.03 * cv2.arcLength(hull, True), True)
        points = approx.reshape(-1, 2).astype(np.float32) if len(approx) == 4 else cv2.boxPoints(cv2.minAreaRect(hull))
        quad = _clockwise(np.asarray(points, np.float32))
        # a card's bright region fills its outline; a court card's picture may break its thin margin, so with
        # ``contours`` (refined later along the outer edge) the region's hull is what must fill it
        filled = cv2.contourArea(hull) if contours else area
        if filled < 0.8 * cv2.contourArea(quad) or not 0.5 < _aspect(quad) < 0.95:
            continue  # not a card-shaped region (or cards touching each other)
        quads.append((quad, contour))
    return quads


def _clockwise(points: NDArray[Any]) -> NDArray[Any]:
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    ordered = points[np.argsort(angles)]
    start = int(np.argmin(ordered.sum(axis=1)))
    return np.roll(ordered, -start, axis=0)


def _sides(quad: NDArray[Any]) -> tuple[float, float]:
    """Mean length of (first and third edges, second and fourth edges)."""
    lengths = [float(np.linalg.norm(quad[i] - quad[(i + 1) % 4])) for i in range(4)]
    return (lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2


def _aspect(quad: NDArray[Any]) -> float:
    a, b = _sides(quad)
    return min(a, b) / max(a, b)


def flatten(frame: Image, quad: NDArray[Any]) -> Image:
    """The card's face, upright (portrait) — one of its two upright orientations."""
    across, down = _sides(quad)
    if across > down:  # lying sideways: start from the next corner so the first edge is a short one
        quad = np.roll(quad, -1, axis=0)
    flat = np.array([[0, 0], [CARD_W - 1, 0], [CARD_W - 1, CARD_H - 1], [0, CARD_H - 1]], np.float32)
    return cv2.warpPerspective(frame, cv2.getPerspectiveTransform(quad, flat), (CARD_W, CARD_H))


def outward_sides(quad: NDArray[Any]) -> list[tuple[NDArray[Any], NDArray[Any], NDArray[Any]]]:
    """The card's four sides, each as (its first corner, the vector along it, its unit normal pointing out of the
    card, towards the felt)."""
    centre = quad.mean(axis=0)
    sides = []
    for i in range(4):
        start, end = quad[i], quad[(i + 1) % 4]
        along = end - start
        normal = np.array([along[1], -along[0]], np.float32) / max(float(np.linalg.norm(along)), 1e-3)
        if float(np.dot((start + end) / 2 - centre, normal)) < 0:
            normal = -normal
        sides.append((start, along, normal))
    return sides


def edge_blur(grey: NDArray[Any], quad: NDArray[Any]) -> float:
    """The blur (Gaussian sigma, frame pixels) of the card's own outline against the felt.

    Profiles across the four sides (``grey``: the frame in float grey levels) are combined by
    median, which beats the noise down, and the 10 %–90 % rise of that profile, ÷ 2.563, is the
    sigma of a blurred step.
    """
    offsets = np.arange(-6.0, 6.01, 0.25, dtype=np.float32)
    steps = np.linspace(0.25, 0.75, 12, dtype=np.float32)
    rows = []
    for start, along, normal in outward_sides(quad):
        rows.append(start + steps[:, None, None] * along + offsets[None, :, None] * normal)
    points = np.concatenate(rows)  # profiles × offsets × (x, y)
    samples = cv2.remap(grey, points[..., 0], points[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    inside, outside = samples[:, :8].mean(axis=1), samples[:, -8:].mean(axis=1)
    span = inside - outside
    usable = span > 10  # the card side is brighter than the felt beyond it
    if usable.sum() < 8:
        return float("inf")
    profiles = (samples[usable] - outside[usable, None]) / span[usable, None]
    profile = np.median(profiles, axis=0)  # falls from 1 (card) to 0 (felt)
    # the rise is measured outward from the brightest point inside: a card's own printed frame line just inside its
    # edge (a court card's) darkens the deep samples, and must not be taken for the edge's blur
    peak = int(np.argmax(profile[: len(offsets) // 2 + 1]))
    profile = np.clip(profile[peak:] / max(float(profile[peak]), 1.0), 0, 1)
    high = offsets[peak + int(np.argmax(profile < 0.9))]
    low = offsets[peak + int(np.argmax(profile < 0.1))]
    return max(0.0, float(low - high)) / 2.563


# ---- the index ----------------------------------------------------------------------------


def corner_glyphs(face: Image) -> Glyphs | None:
    """The rank and suit glyphs of the face's top-left index, or None when the corner holds no such pair."""
    margin = 3
    corner = face[margin : round(CORNER[1] * CARD_H), margin : round(CORNER[0] * CARD_W)]
    grey = cv2.cvtColor(corner, cv2.COLOR_BGR2GRAY)
    paper = float(np.percentile(grey, 90))  # the corner is mostly paper
    if paper < 25:
        return None
    threshold, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    if threshold > 0.85 * paper:  # no real contrast: Otsu split the paper's own noise
        return None
    ink = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    bands = _bands(ink)
    if len(bands) < 2:
        return None
    (rank_top, rank_bottom), (suit_top, suit_bottom) = bands[0], bands[1]
    darkness = np.clip(paper - grey.astype(np.float32), 0, None)
    rank_crop, suit_crop = _crop(darkness, ink, rank_top, rank_bottom), _crop(darkness, ink, suit_top, suit_bottom)
    if rank_crop is None or suit_crop is None:
        return None
    rank, suit = glyph_vector(rank_crop), glyph_vector(suit_crop)
    if rank is None or suit is None:
        return None
    colour = corner[suit_top:suit_bottom].astype(np.float32)
    suit_ink = ink[suit_top:suit_bottom] > 0
    red = colour[..., 2] - np.maximum(colour[..., 0], colour[..., 1])
    redness = float(red[suit_ink].mean() / paper) if suit_ink.any() else 0.0
    paper_pixels = ink == 0
    texture = grey.astype(np.float32) - cv2.GaussianBlur(grey, (0, 0), 3).astype(np.float32)
    noise = float(texture[paper_pixels].std()) if paper_pixels.any() else 0.0
    ink_level = float(np.median(grey[ink > 0])) if (ink > 0).any() else paper
    paper_level = float(np.median(grey[paper_pixels])) if paper_pixels.any() else paper
    contrast = paper_level - ink_level
    clarity = contrast / max(noise, 1.0)
    smooth = cv2.GaussianBlur(grey.astype(np.float32), (0, 0), 1.0)
    steep = float(np.percentile(np.hypot(*np.gradient(smooth)), 99))
    softness = contrast / (2.5066 * max(steep, 1e-3))  # a blurred step rises contrast / (σ √(2π)) per pixel at most
    return Glyphs(rank, suit, redness, rank_crop, suit_crop, clarity, softness)


def _bands(ink: Image, min_rows: int = 6) -> list[tuple[int, int]]:
    """Runs of rows that hold ink, top to bottom, ignoring specks."""
    rows = (ink > 0).sum(axis=1) >= 2
    bands, start = [], None
    for y, inked in enumerate([*rows.tolist(), False]):
        if inked and start is None:
            start = y
        elif not inked and start is not None:
            if y - start >= min_rows:
                bands.append((start, y))
            start = None
    return bands


def _crop(darkness: NDArray[Any], ink: Image, top: int, bottom: int) -> NDArray[Any] | None:
    columns = np.flatnonzero((ink[top:bottom] > 0).sum(axis=0))
    if columns.size == 0:
        return None
    return darkness[top:bottom, columns[0] : columns[-1] + 1]


def glyph_vector(crop: NDArray[Any]) -> Vector | None:
    """A glyph as a unit vector: letter-boxed to a square, its filled shape and its outline."""
    height, width = crop.shape
    side = max(height, width)
    square = np.zeros((side, side), np.float32)
    square[(side - height) // 2 : (side - height) // 2 + height, (side - width) // 2 : (side - width) // 2 + width] = (
        crop
    )
    small = cv2.resize(square, (GLYPH, GLYPH), interpolation=cv2.INTER_AREA)
    edges = cv2.magnitude(cv2.Sobel(small, cv2.CV_32F, 1, 0), cv2.Sobel(small, cv2.CV_32F, 0, 1))
    shape, outline = _normalised(small.ravel()), _normalised(edges.ravel())
    if shape is None or outline is None:
        return None
    vector: Vector = (np.concatenate([shape, outline]) / np.sqrt(2)).astype(np.float32)
    return vector


def _normalised(vector: Vector) -> Vector | None:
    vector = vector - vector.mean()
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 1e-6 else None


# ---- templates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Templates:
    """The calibration deck's own glyphs: per card, its rank and suit crops (the banks are built from them)."""

    glyphs: dict[str, tuple[NDArray[Any], NDArray[Any]]]  # card code → (rank crop, suit crop)
    red_threshold: float  # redness above which a suit's ink is red

    def banks(self) -> tuple[dict[str, NDArray[Any]], dict[str, NDArray[Any]]]:
        """Per rank and per suit, the vectors of every sample and of its variations."""
        ranks: dict[str, list[Vector]] = {rank: [] for rank in RANKS}
        suits: dict[str, list[Vector]] = {suit: [] for suit in SUITS}
        for code, (rank_crop, suit_crop) in self.glyphs.items():
            ranks[code[0]] += variations(rank_crop)
            suits[code[1]] += variations(suit_crop)
        return {k: np.stack(v) for k, v in ranks.items()}, {k: np.stack(v) for k, v in suits.items()}

    def save(self, path: str | Path) -> None:
        arrays = {f"rank_{code}": rank for code, (rank, _) in self.glyphs.items()}
        arrays |= {f"suit_{code}": suit for code, (_, suit) in self.glyphs.items()}
        with Path(path).open("wb") as out:
            np.savez_compressed(out, red_threshold=np.float32(self.red_threshold), **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> Templates:
        try:
            data = np.load(Path(path))
            codes = sorted(name[5:] for name in data.files if name.startswith("rank_"))
            glyphs = {code: (data[f"rank_{code}"], data[f"suit_{code}"]) for code in codes}
            red_threshold = float(data["red_threshold"])
        except (OSError, ValueError, KeyError, EOFError) as error:  # an empty file: EOFError
            raise RecognitionError(f"{path}: not a templates file ({error or type(error).__name__})") from None
        if codes != sorted(DECK):
            raise RecognitionError(f"{path}: templates must cover all 52 cards, found {len(codes)}")
        return cls(glyphs, red_threshold)


def variations(crop: NDArray[Any]) -> list[Vector]:
    """The glyph as the camera may see it: thinner or bolder strokes, a little squeezed, a little soft."""
    vectors = []
    thin = np.ones((2, 2), np.uint8)
    for stroke in (cv2.erode(crop, thin), crop, cv2.dilate(crop, thin)):
        height, width = stroke.shape
        for sx, sy in ((1.0, 1.0), (0.88, 1.0), (1.0, 0.88), (1.12, 1.0), (1.0, 1.12)):
            size = (max(2, round(width * sx)), max(2, round(height * sy)))
            scaled = cv2.resize(stroke, size, interpolation=cv2.INTER_LINEAR)
            for sigma in (0.0, 1.0):
                soft = cv2.GaussianBlur(scaled, (0, 0), sigma) if sigma else scaled
                vector = glyph_vector(soft)
                if vector is not None:
                    vectors.append(vector)
    return vectors


@dataclass(frozen=True)
class Problem:
    """A calibration photo that cannot be used (or a card with no photo), and why."""

    photo: str
    why: str

    def __str__(self) -> str:
        return f"{self.photo}: {self.why}"


class CalibrationError(RecognitionError):
    """Every problem of a calibration set, found at once."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s): " + "; ".join(map(str, problems)))


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
SECOND_CARD = 0.5  # another outline at least this share of the largest: two cards in the photo


def calibrate(photos: dict[str, Image], names: dict[str, str] | None = None) -> Templates:
    """Templates from one photo per card of the studio's deck (``{"AS": image, …}``, all 52; ``names``: the file
    each came from, for the messages). Every photo is looked at; all the problems are raised at once."""
    names = names or {}
    problems = [Problem(code, "no photo of this card") for code in sorted(set(DECK) - set(photos))]
    problems += [Problem(names.get(code, code), "not a card code") for code in sorted(set(photos) - set(DECK))]
    glyphs: dict[str, tuple[NDArray[Any], NDArray[Any]]] = {}
    red: list[float] = []
    black: list[float] = []
    for code in sorted(set(photos) & set(DECK)):
        found, why = _calibration_glyphs(photos[code])
        if found is None:
            problems.append(Problem(names.get(code, code), why))
            continue
        glyphs[code] = (found.rank_crop, found.suit_crop)
        (red if code[1] in RED_SUITS else black).append(found.redness)
    if problems:
        raise CalibrationError(problems)
    if min(red) <= max(black):
        raise CalibrationError(
            [Problem("all photos", "red and black suits are not told apart by colour (check the light)")]
        )
    return Templates(glyphs, red_threshold=(min(red) + max(black)) / 2)


def _calibration_glyphs(photo: Image) -> tuple[Any, str]:
    """The corner index of the one card in ``photo``, or None and why it cannot be used (what to change)."""
    from hardware.camera import quality  # it finds the card with this module's outlines (imported here: no circle)

    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    found, why = quality.locate(photo, grey)
    if found is None:
        return None, why
    quad, face = found[0], flatten(photo, found[0])  # its edges are looked at along the refined outline
    why = quality.check(grey, quality.refine(*found), face)
    if why or (why := quality.too_soft(edge_blur(grey.astype(np.float32), quad) * CARD_W / min(_sides(quad)))):
        return None, why
    glyphs = corner_glyphs(face)
    return (None, "the card's corner index could not be read") if glyphs is None else (glyphs, "")


def read_calibration_dir(directory: str | Path) -> tuple[dict[str, Image], dict[str, str], list[Problem]]:
    """The photos of a folder named by card code (``AS.jpg``, ``TD.png``…), the file of each, and the files that
    cannot be used (not images, unreadable, a card twice)."""
    photos: dict[str, Image] = {}
    names: dict[str, str] = {}
    problems: list[Problem] = []
    for path in sorted(Path(directory).iterdir()):
        if path.is_dir() or path.name.startswith("."):
            continue
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            problems.append(Problem(path.name, f"not a photo ({', '.join(IMAGE_SUFFIXES)})"))
            continue
        code = path.stem.upper()
        if code in names:
            problems.append(Problem(path.name, f"a second photo of {code} (also {names[code]})"))
            continue
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            problems.append(Problem(path.name, "not a readable image"))
            names[code] = path.name
            continue
        photos[code], names[code] = image, path.name
    return photos, names, problems


def calibrate_dir(directory: str | Path) -> Templates:
    """Templates from a folder of photos named by card code; every problem of the folder raised at once."""
    return calibrate_read(*read_calibration_dir(directory))


def calibrate_read(photos: dict[str, Image], names: dict[str, str], problems: list[Problem]) -> Templates:
    """Templates from what ``read_calibration_dir`` read (``with_folder_problems``)."""
    return with_folder_problems(calibrate, photos, names, problems)


def with_folder_problems(
    make: Callable[[dict[str, Image], dict[str, str]], T], photos: dict[str, Image], names: dict[str, str],
    problems: list[Problem],
) -> T:  # fmt: skip
    """``make(photos, names)``, with the folder's problems and calibration's raised together (a card whose only photo
    is unreadable is said once, as unreadable)."""
    try:
        made = make(photos, names)
    except CalibrationError as error:
        unreadable = {problem.photo for problem in problems}
        problems = problems + [
            p for p in error.problems if not (p.why == "no photo of this card" and names.get(p.photo) in unreadable)
        ]
    else:
        if not problems:
            return made
    raise CalibrationError(problems)


def self_check(templates: Templates, photos: dict[str, Image]) -> dict[str, Reading]:
    """Each calibration photo read again with the templates made from them: the card, its confidence, and the nearest
    other card with its margin (a small margin: two of the deck's cards look alike)."""
    from hardware.camera.quality import locate  # the card as calibration found it (in a bright surround too)

    recognizer, readings = Recognizer(templates), {}
    for code, photo in sorted(photos.items()):
        found, _why = locate(photo, cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY))
        readings[code] = recognizer.assess(flatten(photo, found[0])) if found else Reading(None, 0.0)
    return readings


# ---- recognition --------------------------------------------------------------------------


def _scores(vector: Vector, bank: Bank) -> dict[str, float]:
    """How well the glyph matches each name: its best correlation with any of the name's samples."""
    best = np.maximum.reduceat(bank.vectors @ vector, bank.starts)
    return dict(zip(bank.names, best.tolist(), strict=True))


@dataclass(frozen=True)
class Bank:
    """All of one kind's sample vectors in one matrix, grouped by name (one product scores them all)."""

    names: tuple[str, ...]
    vectors: NDArray[Any]
    starts: NDArray[Any]

    @classmethod
    def of(cls, samples: dict[str, NDArray[Any]]) -> Bank:
        names = tuple(samples)
        sizes = [len(samples[name]) for name in names]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        return cls(names, np.concatenate([samples[name] for name in names]), starts)


@dataclass(frozen=True)
class Vote:
    """The best name over the averaged scores, its confidence (capped when the runner-up comes close), the
    runner-up and how far behind it is."""

    name: str
    confidence: float
    runner_up: str
    margin: float


def _best(scores: list[dict[str, float]], allowed: str) -> Vote:
    mean = sorted(((sum(s[name] for s in scores) / len(scores), name) for name in allowed), reverse=True)
    (best, name), (second, runner_up) = mean[0], mean[1]
    return Vote(name, min(best, 0.5 + MARGIN_WEIGHT * (best - second)), runner_up, best - second)


@dataclass(frozen=True)
class Reading:
    """A card face read: the card (None below the threshold), the confidence, and the nearest other card."""

    card: str | None
    confidence: float
    runner_up: str | None = None
    margin: float = 0.0


class Recognizer:
    def __init__(self, templates: Templates, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.templates = templates
        self.threshold = threshold
        ranks, suits = templates.banks()
        self.ranks, self.suits = Bank.of(ranks), Bank.of(suits)

    def read(self, face: Image) -> tuple[str | None, float]:
        reading = self.assess(face)
        return reading.card, reading.confidence

    def assess(self, face: Image) -> Reading:
        """Both indexes (top-left, and bottom-right turned upright) vote; either alone will do. The runner-up is the
        card one step away on the closer of rank and suit."""
        corners = [glyphs for glyphs in (corner_glyphs(face), corner_glyphs(face[::-1, ::-1])) if glyphs is not None]
        if not corners:
            return Reading(None, 0.0)
        rank = _best([_scores(g.rank, self.ranks) for g in corners], RANKS)
        redness = sum(g.redness for g in corners) / len(corners)
        suits = RED_SUITS if redness > self.templates.red_threshold else "SC"
        suit = _best([_scores(g.suit, self.suits) for g in corners], suits)
        clarity = max(g.clarity for g in corners)
        clear = float(np.clip((clarity - CLARITY[0]) / (CLARITY[1] - CLARITY[0]), 0, 1))
        confidence = max(0.0, min(rank.confidence, suit.confidence, 0.5 + 0.5 * clear))
        card = rank.name + suit.name
        runner_up = rank.runner_up + suit.name if rank.margin <= suit.margin else rank.name + suit.runner_up
        margin = min(rank.margin, suit.margin)
        return Reading(card if confidence >= self.threshold else None, confidence, runner_up, margin)

    def recognize(self, frame: Image) -> list[Detection]:
        detections = []
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        grey_levels = grey.astype(np.float32)
        for quad in find_cards(frame, grey):
            face = flatten(frame, quad)
            softness = edge_blur(grey_levels, quad) * CARD_W / min(_sides(quad))  # the blur as seen on the flat face
            detections.append(detected(face, quad, *self.read(face), softness, SOFTNESS, self.threshold))
        return detections


def detected(
    face: Image,
    quad: NDArray[Any],
    card: str | None,
    confidence: float,
    softness: float,
    soft: tuple[float, float],
    threshold: float,
) -> Detection:
    """A card read on ``face``, its confidence capped by how soft its outline is (``softness`` px on the flat face):
    full up to ``soft[0]``, at most 0.5 — unknown — past ``soft[1]``; a card whose capped confidence is under the
    ``threshold`` is unknown."""
    sharp = float(np.clip((soft[1] - softness) / (soft[1] - soft[0]), 0, 1))
    confidence = min(confidence, 0.5 + 0.5 * sharp)
    if confidence < threshold:
        card = None
    x, y, w, h = cv2.boundingRect(quad.astype(np.int32))
    outline = tuple((float(px), float(py)) for px, py in quad)
    return Detection(card, confidence, outline, (x, y, w, h), face)
