"""The root of the recorder's exceptions (its device, its output folder, its playlists), each with a stable ``code``."""

from __future__ import annotations


class RecorderError(Exception):
    code = "recorder_error"


class DeviceError(RecorderError, ValueError):
    """A device address the recorder cannot open (its scheme, its path, its options), or a camera that does not open."""

    code = "device_url"


class OutputError(RecorderError):
    """An output folder the recorder cannot write, or one another recorder is writing."""

    code = "output_unwritable"


class PlaylistError(RecorderError):
    """A playlist that cannot be read: missing, unreadable, or not one the recorder writes."""

    code = "playlist_unreadable"
