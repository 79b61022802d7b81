"""Reading face-up cards from a camera: OpenCV recogniser, calibration, confirmation over frames."""

from hardware.camera.device import CameraReader, CardSeen, Confirmer
from hardware.camera.recognizer import (
    DEFAULT_THRESHOLD,
    Detection,
    RecognitionError,
    Recognizer,
    Templates,
    calibrate,
    calibrate_dir,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "CameraReader",
    "CardSeen",
    "Confirmer",
    "Detection",
    "RecognitionError",
    "Recognizer",
    "Templates",
    "calibrate",
    "calibrate_dir",
]
