"""Moonshine in its own process: ``python -m anonpsy.audio.moonshine_worker``.

moonshine-cpp 0.1.4 keeps about 40 MB per second of audio it transcribes until its process ends (freeing the
model does not return it), so :class:`anonpsy.audio.asr.MoonshineRecognizer` runs the model here and replaces
this process every few tens of seconds of audio.

Protocol on stdin/stdout, little-endian: a request is a ``uint32`` sample count and that many ``float32``
samples at 16 kHz (a count of 0 ends the worker); a reply is an ``int32`` status, a ``float64`` of CPU seconds
spent, a ``uint32`` byte count and the UTF-8 transcript. Anything the library prints goes to stderr.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import struct
import sys
import time
from typing import IO, Any

REQUEST = struct.Struct("<I")
REPLY = struct.Struct("<idI")


def read_exact(stream: IO[bytes], n: int) -> bytes:
    """Exactly ``n`` bytes, or fewer only at the end of the stream."""
    parts = []
    while n:
        b = stream.read(n)
        if not b:
            break
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """Load the model, then answer requests until a zero count or the end of input."""
    import numpy as np

    mc: Any = importlib.import_module("moonshine_cpp")

    model = mc.MoonshineModel(language="en", model_type="base")
    lib = mc.moonshine_lib
    while True:
        head = read_exact(inp, REQUEST.size)
        if len(head) < REQUEST.size:
            return
        (count,) = REQUEST.unpack(head)
        if count == 0:
            return
        x = np.frombuffer(read_exact(inp, 4 * count), dtype=np.float32)
        t = time.process_time()
        text = ctypes.c_char_p(0)
        status = lib.moonshine_transcribe(
            model.model_handle, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(x), ctypes.byref(text)
        )
        data = (text.value or b"") if status == 0 else b""
        if status == 0:
            lib.moonshine_free_text(text)
        out.write(REPLY.pack(int(status), time.process_time() - t, len(data)) + data)
        out.flush()


def main() -> None:
    """Serve on the original stdout; the library's own output goes to stderr."""
    proto = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, proto)


if __name__ == "__main__":
    main()
