"""What is wrong with a calibration photo, said so that the operator knows what to change.

Both readers' calibration (``recognizer.calibrate``, ``learned.learn``) find the photo's one card here (``locate``) and
ask ``check`` whether its flattened face can be learned from. A photo is **handled** where it can be:

- a **bright or vignetted surround** (a white vignette, a pale table towards the photo's edges): where the first look
  (one Otsu threshold, ``recognizer.find_cards``) finds no card, the photo is looked at again at brighter and brighter
  thresholds, keeping only regions that do not touch the photo's border, until the card stands apart.

Otherwise it is **refused** with one sentence saying what to change:

- the card does not stand out from its surround (an edge with too little contrast: which edge) — a darker cloth;
- the card is cut by the frame (its outline touches the photo's border: which side) — move it fully into the frame;
- the card is too small in the photo — move the camera closer; too dark — more light;
- the card is too blurred (``too_soft``) — hold the camera still, focus;
- glare: a saturated highlight that washes out an index corner — tilt the card or the light.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from hardware.camera.recognizer import (
    CLOSINGS,
    SECOND_CARD,
    SOFTNESS,
    Image,
    _card_regions,
    _sides,
    find_cards,
    outward_sides,
)

MIN_SIDE = 150  # px: the card's short side in the photo, at least (the flat face is 250 px wide)
MIN_PAPER = 70  # the paper's grey level on the flat face (its 90th percentile), at least
MIN_CONTRAST = 14.0  # grey levels between the card's paper just inside an edge and the surround just outside it
GLARE_LEVEL = 250  # saturated grey
GLARE_SHARE = 0.05  # an index corner this much saturated…
GLARE_LOST = 0.8  # …holding less than this share of the other corner's ink: glare over it
GLARE_INK = 60  # ink: darker than the corner's paper (its 90th percentile) by this much
GLARE_CORNER = (0.26, 0.32)  # an index corner, as shares of the face's width and height
CUT_SHARE = 0.35  # a region cut by the photo's border, larger than this share of the photo, is no card
BORDER = 2  # px: an outline this close to the photo's border is cut by it
LOOKS = 10  # brighter thresholds tried for a card in a bright surround

DIRECTIONS = ("right", "bottom-right", "bottom", "bottom-left", "left", "top-left", "top", "top-right")


def direction(dx: float, dy: float) -> str:
    """The photo's side a vector points to (``dy`` down), in eight directions."""
    return DIRECTIONS[round(math.atan2(dy, dx) / (math.pi / 4)) % 8]


def locate(photo: Image, grey: Image) -> tuple[tuple[NDArray[Any], NDArray[Any]] | None, str]:
    """The one card of a calibration photo, as ``(quad, contour)``, or None and why (what to change).

    A region that runs into the photo's border is no whole card: a card cut by the frame, or a card merged with a
    bright surround (which the brighter looks of ``isolated`` may still tell apart)."""
    size = grey.shape[0] * grey.shape[1]
    looked = find_cards(photo, grey, contours=True, surround=False)  # a bright surround: ``isolated``'s brighter looks
    found = [pair for pair in looked if min(_sides(pair[0])) >= MIN_SIDE / 2]
    found.sort(key=lambda pair: -cv2.contourArea(pair[0]))  # smaller regions: specks of the table, not a card
    if len(found) > 1 and cv2.contourArea(found[1][0]) >= SECOND_CARD * cv2.contourArea(found[0][0]):
        return None, f"{len(found)} cards found in the photo (one card per photo)"  # whole or cut by the frame
    whole = [pair for pair in found if not cut_sides(pair[1], grey.shape)] or isolated(photo, grey)
    if not whole:
        for quad, contour in found:
            sides = cut_sides(contour, grey.shape)
            if len(sides) <= 2 and cv2.contourArea(quad) < CUT_SHARE * size:
                return None, cut_off(sides)
        return None, why_no_card(grey)
    return whole[0], ""


def refine(quad: NDArray[Any], contour: NDArray[Any]) -> NDArray[Any]:
    """The card's true corners: a line fitted to the outline's points along each side of ``quad`` (its middle 70 %,
    past the rounded corners), adjacent lines intersected; ``quad`` itself when a side cannot be fitted."""
    points = contour.reshape(-1, 2).astype(np.float32)
    lines = []
    for i in range(4):
        start, along = quad[i], quad[(i + 1) % 4] - quad[i]
        length = float(np.linalg.norm(along))
        if length < 1e-3:
            return quad
        unit = along / length
        normal = np.array([-unit[1], unit[0]], np.float32)
        offset = points - start
        t, distance = offset @ unit, np.abs(offset @ normal)
        near = (t > 0.15 * length) & (t < 0.85 * length) & (distance < max(3.0, 0.06 * length))
        if near.sum() < 5:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(points[near], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float32), np.array([vx, vy], np.float32)))
    corners = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[(i - 1) % 4], lines[i]
        system = np.array([[d1[0], -d2[0]], [d1[1], -d2[1]]], np.float32)
        if abs(float(np.linalg.det(system))) < 1e-6:
            return quad
        corners.append(p1 + np.linalg.solve(system, p2 - p1)[0] * d1)
    refined = np.array(corners, np.float32)
    if float(np.abs(refined - quad).max()) > 0.2 * float(np.linalg.norm(quad[2] - quad[0])):
        return quad  # the fit went astray: keep the outline
    return refined


def isolated(photo: Image, grey: Image) -> list[tuple[NDArray[Any], NDArray[Any]]]:
    """A card in a bright surround: the card-shaped regions above brighter and brighter thresholds, regions that touch
    the photo's border left out (the surround), from the first threshold at which one stands apart."""
    blurred = cv2.GaussianBlur(grey, (5, 5), 0)
    otsu, _mask = cv2.threshold(blurred, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    top = float(np.percentile(blurred, 99.5))
    for level in np.linspace(otsu, top, LOOKS + 2)[1:-1]:
        mask = clear_border((blurred > level).astype(np.uint8) * 255)
        for size in CLOSINGS:
            closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((size, size), np.uint8))
            found = [pair for pair in _card_regions(photo, closed, 0.0015, True) if min(_sides(pair[0])) >= MIN_SIDE]
            if found:
                return sorted(found, key=lambda pair: -cv2.contourArea(pair[0]))
    return []


def clear_border(mask: Image) -> Image:
    """``mask`` without the regions that touch the photo's border."""
    _count, labels, stats, _centres = cv2.connectedComponentsWithStats(mask)
    height, width = mask.shape
    x, y, w, h = (stats[:, i] for i in range(4))
    touching = (x <= 0) | (y <= 0) | (x + w >= width) | (y + h >= height)
    touching[0] = True  # the background
    keep = np.where(touching, 0, 255).astype(np.uint8)
    cleared: Image = keep[labels]
    return cleared


def cut_sides(points: NDArray[Any], shape: tuple[int, ...]) -> list[str]:
    """The photo's sides that an outline's (or a region's) points run into."""
    points = points.reshape(-1, 2)
    height, width = shape[:2]
    touching = {
        "top": points[:, 1] <= BORDER - 1,
        "right": points[:, 0] >= width - BORDER,
        "bottom": points[:, 1] >= height - BORDER,
        "left": points[:, 0] <= BORDER - 1,
    }
    return [side for side, near in touching.items() if int(near.sum()) >= 3]


def cut_off(sides: list[str]) -> str:
    named = " and ".join(sides) + (" edges" if len(sides) > 1 else " edge")
    return f"the card runs off the photo at its {named}: move the card fully into the frame"


def why_no_card(grey: Image) -> str:
    """Why no card was found: a card cut by the frame, a surround as bright as the card, too dark, or none there."""
    if float(np.percentile(grey, 99)) < MIN_PAPER:
        return "too dark to find a card: light the table more"
    blurred = cv2.GaussianBlur(grey, (5, 5), 0)
    _level, mask = cv2.threshold(blurred, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    count, labels, stats, _centres = cv2.connectedComponentsWithStats(mask)
    size = grey.shape[0] * grey.shape[1]
    surround = False
    for i in range(1, count):
        area = int(stats[i, cv2.CC_STAT_AREA])
        points = np.flip(np.argwhere(labels == i), axis=1).astype(np.int32)  # (x, y)
        sides = cut_sides(points, grey.shape)
        if not 0.02 * size <= area <= 0.97 * size or not sides:
            continue  # a speck; the whole photo (nothing stands out); a region inside the photo
        if float(np.median(grey[labels == i])) < 150:
            continue  # a lighter part of the table, not paper-bright
        solid = area / max(cv2.contourArea(cv2.convexHull(points)), 1.0)
        if solid >= 0.9 and area < CUT_SHARE * size and len(sides) <= 2:
            return cut_off(sides)  # a card-like region straight-cut by a side or two (a bright surround reaches more)
        surround = True
    if not surround:
        return "no card found in the photo: photograph one card, face up and whole, on a plain dark cloth"
    return f"{melting(mask)}: retake on a darker cloth"


def melting(mask: Image) -> str:
    """Which of the card's edges meets the bright surround, said ("the card's top-left edge does not stand out from
    the background"): the table still seen around the card (the largest dark region of ``mask``) is open on that
    side, where its hull is not; closed all round, every edge meets it."""
    count, labels, stats, centres = cv2.connectedComponentsWithStats(255 - mask)
    if count < 2:
        return "the card does not stand out from the background"
    table = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    hull = cv2.convexHull(np.flip(np.argwhere(labels == table), axis=1).astype(np.int32))
    moments = cv2.moments(hull)
    if moments["m00"] <= 0:
        return "the card does not stand out from the background"
    dx = moments["m10"] / moments["m00"] - centres[table][0]
    dy = moments["m01"] / moments["m00"] - centres[table][1]
    if math.hypot(dx / mask.shape[1], dy / mask.shape[0]) < 0.02:  # closed all round: the card's edges all melt
        return "the card's edges do not stand out from the bright background around it"
    return f"the card's {direction(dx, dy)} edge does not stand out from the background"


def too_soft(softness: float) -> str:
    """Why a calibration photo whose card's outline is this soft (px on the flat face) cannot be used ("": it can)."""
    if softness == float("inf"):
        return "the card's edge could not be measured (too little contrast with the table): retake on a darker cloth"
    if softness > SOFTNESS[1]:
        return (
            f"too blurred (edge blur {softness:.1f} px on the flattened card, at most {SOFTNESS[1]}): hold the camera "
            "still and focus on the card"
        )
    return ""


def edge_contrast(grey: Image, quad: NDArray[Any]) -> list[tuple[float, str]]:
    """Per side of the card, the paper's grey level just inside the edge less the surround's just outside (medians
    along the side's middle 70 %), with the side's direction in the photo."""
    centre = quad.mean(axis=0)
    steps = np.linspace(0.15, 0.85, 24, dtype=np.float32)
    found = []
    for start, along, normal in outward_sides(quad):
        line = start + steps[:, None] * along

        def level(offsets: NDArray[Any], line: NDArray[Any] = line, normal: NDArray[Any] = normal) -> float:
            points = (line[:, None, :] + offsets[None, :, None] * normal).astype(np.float32)
            samples = cv2.remap(grey, points[..., 0], points[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            return float(np.median(samples))

        inside, outside = level(np.arange(-9.0, -3.0, dtype=np.float32)), level(np.arange(4.0, 10.0, dtype=np.float32))
        middle = start + along / 2 - centre
        found.append((inside - outside, direction(float(middle[0]), float(middle[1]))))
    return found


def check(grey: Image, quad: NDArray[Any], face: Image) -> str:
    """Why the card at ``quad`` (its flat ``face``) cannot be learned from, before its blur is looked at ("": it
    can): too small, too dark, glare over an index, an edge that does not stand out from the surround."""
    side = min(_sides(quad))
    if side < MIN_SIDE:
        return f"the card is too small in the photo ({side:.0f} px across, at least {MIN_SIDE}): move the camera closer"
    face_grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
    paper = float(np.percentile(face_grey, 90))
    if paper < MIN_PAPER:
        return f"too dark (the card's paper at grey level {paper:.0f}, at least {MIN_PAPER}): light the table more"
    if glare_at(face):
        return "glare over the card's index corner: tilt the card or the light"
    contrast, where = min(edge_contrast(grey.astype(np.float32), quad))
    if contrast < MIN_CONTRAST:
        return f"the card's {where} edge does not stand out from the background: retake on a darker cloth"
    return ""


def glare_at(face: Image) -> bool:
    """Whether a saturated highlight has washed out one of the flat face's two index corners: a corner partly
    saturated that holds much less ink than the other (both hold the same rank and suit, turned). Deck-independent:
    a light that is merely uneven, a pale corner of a court card's picture, leave the two corners' ink alike."""
    grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
    width, height = round(GLARE_CORNER[0] * grey.shape[1]), round(GLARE_CORNER[1] * grey.shape[0])
    corners = [grey[4:height, 4:width], grey[::-1, ::-1][4:height, 4:width]]
    inks = [int((corner < float(np.percentile(corner, 90)) - GLARE_INK).sum()) for corner in corners]
    for corner, ink, other in ((corners[0], inks[0], inks[1]), (corners[1], inks[1], inks[0])):
        if float((corner >= GLARE_LEVEL).mean()) >= GLARE_SHARE and ink < GLARE_LOST * other:
            return True
    return False
