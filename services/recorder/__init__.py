"""The table camera recorded as HLS (``studio record``), and the playlist reader the API uses to find a moment in it.

``services.recorder.playlist`` reads what the recorder writes and loads neither PyAV nor OpenCV; the recorder
itself is ``services.recorder.recorder`` (threads), ``writer`` (segments and playlist) and ``sources`` (devices).
"""
