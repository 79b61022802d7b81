"""Reading face-up cards from a camera: OpenCV recogniser, calibration, confirmation over frames."""

from hardware.camera.device import CameraReader, CardSeen, Confirmer
from hardware.camera.recognizer import (
    DEFAULT_THRESHOLD,
    CalibrationError,
    Detection,
    Problem,
    Reading,
    RecognitionError,
    Recognizer,
    Templates,
    calibrate,
    calibrate_dir,
    calibrate_read,
    read_calibration_dir,
    self_check,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "CalibrationError",
    "CameraReader",
    "CardSeen",
    "Confirmer",
    "Detection",
    "Problem",
    "Reading",
    "RecognitionError",
    "Recognizer",
    "Templates",
    "calibrate",
    "calibrate_dir",
    "calibrate_read",
    "read_calibration_dir",
    "self_check",
]
