"""`livebridge preview-server` for the Python checks (e2e, screenshots): started on port 0, and the port it got read
from the line it prints first. A port found free here and handed over could be taken before it listens."""
import os
import re
import select
import subprocess
import threading
import time


def start_preview_server(livebridge, seconds=30):
    """The running server and its port. Raises RuntimeError, with what it said, when it names no port within
    `seconds` (it is then killed). What it prints later is read, so that a full pipe never stops it."""
    server = subprocess.Popen([livebridge, "preview-server", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = first_line(server.stdout, seconds)
    match = re.search(r"http://127\.0\.0\.1:(\d+) ", line)
    if not match:
        server.kill()
        server.wait(10)
        raise RuntimeError(f"preview-server did not say where it listens: {line!r}\n" + server.stderr.read().decode(errors="replace"))
    threading.Thread(target=server.stdout.read, daemon=True).start()
    threading.Thread(target=server.stderr.read, daemon=True).start()
    return server, int(match.group(1))


def first_line(stream, seconds):
    """The first line of a pipe, or what came of it within `seconds`."""
    deadline, data = time.monotonic() + seconds, b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            break
        chunk = os.read(stream.fileno(), 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").split("\n", 1)[0]
