"""Renders every example (the seeds' payloads and the activities of config/livebridge.example.yaml), opens each page in
headless Chromium, takes a screenshot, and checks the screenshot is not blank and the page's text holds the values
the phone should show. Screenshots of the config examples go to docs/screens/."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIVEBRIDGE = os.path.join(ROOT, ".build", "debug", "livebridge")
AT = "2026-11-22T12:00:00Z"
CONFIG_EXPECTED = {
    "washer": ["In progress", "1h 32m", "65%"],
    "laundry_timer": ["Laundry", "1:00:00"],
    "ev": ["90%", "3 min left", "Standard", "Extended"],
    "vacuum": ["Mopping", "20.1 m²", "Battery: 87%"],
    "dryer": ["In progress", "35:20 left"],
    "backup": ["database-migration", "Step 2/5", "Migrating users table…"],
}


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    sys.exit("headless Chromium not found (apt-get install chromium)")


def distinct_colours(png_path):
    """Decodes an 8-bit RGB(A) PNG with the standard library and counts distinct pixel colours (a sample)."""
    data = open(png_path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, width, height, kind, idat = 8, 0, 0, 0, b""
    while pos < len(data):
        length, tag = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            width, height, depth, kind = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and kind in (2, 6), f"unexpected PNG format {depth}/{kind}"
        elif tag == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    bpp = 3 if kind == 2 else 4
    stride = width * bpp
    previous = bytearray(stride)
    colours = set()
    offset = 0
    for row in range(height):
        filter_type = raw[offset]
        line = bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if filter_type == 1: line[i] = (line[i] + a) & 255
            elif filter_type == 2: line[i] = (line[i] + b) & 255
            elif filter_type == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif filter_type == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        previous = line
        if row % 4 == 0:
            for x in range(0, width, 4):
                colours.add(bytes(line[x * bpp:x * bpp + 3]))
    return len(colours)


def check(browser, html, png, expected):
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=440,480",
                    f"--screenshot={png}", "file://" + html], check=True, capture_output=True, timeout=120)
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + html],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    colours = distinct_colours(png)
    missing = [text for text in expected if f">{text}<" not in dom.replace("&amp;", "&")]
    problems = []
    if colours < 8:
        problems.append(f"the screenshot looks blank ({colours} colours)")
    if missing:
        problems.append(f"the page lacks {missing}")
    return problems


def live_page_on_a_phone(browser):
    """The live preview page (preview-server) at a phone's 390 points: an ended activity drawn with its final content
    and an Ended mark, a long status cut to its column, the log with headings and the activity named, nothing
    clipped (the page says whether its width fits)."""
    import time
    import urllib.request
    sys.path.insert(0, os.path.join(ROOT, "Tests", "harness"))
    from preview_server import start_preview_server
    try:
        server, port = start_preview_server(LIVEBRIDGE)
    except RuntimeError:
        return ["live page: preview-server did not say where it listens"]
    base = f"http://127.0.0.1:{port}"
    problems = []
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/api/state", timeout=1)
                break
            except OSError:
                time.sleep(0.1)

        def push(slug, state, content):
            request = urllib.request.Request(base + "/activity/" + slug, method="PATCH", headers={"Content-Type": "application/json"},
                                             data=json.dumps({"state": state, "content": content}).encode())
            urllib.request.urlopen(request, timeout=5)
        push("vacuum", "ONGOING", {"template": "monitor", "icon": "robotic.vacuum", "left_column": {"header": "Status",
             "value": {"value": "Returning to the charging dock"}}, "right_column": {"header": "Battery", "value": {"value": "47%"}}})
        push("washer", "ONGOING", {"template": "progress", "icon": "washer", "progress": {"style": "simple", "value": 0.6}, "header_left": "Washing"})
        push("washer", "IDLE", {"template": "progress", "icon": "washer", "progress": {"style": "simple", "value": 1}, "header_left": "Done"})
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=390,1200",
                              "--virtual-time-budget=5000", "--dump-dom", base + "/"], check=True, capture_output=True, text=True, timeout=120).stdout
        for text in ['data-fits="true"', ">Ended<", ">Done<", "Returning to", "…<", ">Time</th>", ">Activity</th>", "aivi/vacuum"]:
            if text not in dom:
                problems.append(f"live page at 390 points: lacks {text}")
        print("screens: live page at 390 points " + ("ok" if not problems else "FAILED"))
    finally:
        server.terminate()
        server.wait(10)
    return problems


def main():
    browser = chromium()
    work = tempfile.mkdtemp(prefix="livebridge-screens-")
    failures = []
    expected = json.load(open(os.path.join(ROOT, "Tests", "screenshots", "expected.json")))
    for name, texts in sorted(expected.items()):
        html = os.path.join(work, name + ".html")
        subprocess.run([LIVEBRIDGE, "preview", os.path.join(ROOT, "Tests", "screenshots", "payloads", name + ".json"),
                        "--at", AT, "--out", html], check=True)
        for problem in check(browser, html, os.path.join(work, name + ".png"), texts):
            failures.append(f"{name}: {problem}")
        print(f"screens: {name} ok" if not any(f.startswith(name + ":") for f in failures) else f"screens: {name} FAILED")
    shutil.copy(os.path.join(ROOT, "config", "livebridge.example.yaml"), os.path.join(work, "livebridge.yaml"))
    shutil.copy(os.path.join(ROOT, "config", "secrets.example.yaml"), os.path.join(work, "secrets.yaml"))
    docs = os.path.join(ROOT, "docs", "screens")
    os.makedirs(docs, exist_ok=True)
    for activity, texts in CONFIG_EXPECTED.items():
        html = os.path.join(work, activity + ".html")
        subprocess.run([LIVEBRIDGE, "preview", "--config", os.path.join(work, "livebridge.yaml"), "--states",
                        os.path.join(ROOT, "config", "states.example.json"), "--activity", activity, "--at", AT, "--out", html], check=True)
        png = os.path.join(docs, activity + ".png")
        for problem in check(browser, html, png, texts):
            failures.append(f"config {activity}: {problem}")
        print(f"screens: config {activity} ok" if not any(f.startswith("config " + activity) for f in failures) else f"screens: config {activity} FAILED")
    failures += live_page_on_a_phone(browser)
    shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("screens: PASSED")


if __name__ == "__main__":
    main()
