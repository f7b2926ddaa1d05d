"""`POST /api/v1/media/hash` throughput for a 1-megapixel JPEG (issue 30; `--only media`).

scikit-image's astronaut resized to 1000 x 1000 and saved as a JPEG (quality 90) is POSTed as raw bytes by one
client with a platform token, one request at a time, to one sync gunicorn worker (bench/processes.py, as the
queue-page figures run the app). Floor: pdqhash.compute on the decoded RGB array in a loop, in the bench
process; beside it, decoding the JPEG and hashing (what the endpoint must do at least) in the same loop.
"""

from __future__ import annotations

import hashlib
import io
import time

import numpy as np
import pdqhash
import requests
from PIL import Image

from bench import processes
from bench.media_images import bits_to_int, encode, photographs
from bench.report import Figure, summary_ms
from factcheck.media import pdq_hex

SIDE = 1000


def _rate(samples: list[float]) -> float:
    return len(samples) / (sum(samples) / 1000)


def bench_media_hash(*, requests_count: int, warmup: int) -> Figure:
    from accounts.models import ApiToken, Role
    from bench.media_propagation import _account

    jpeg = encode(photographs()["astronaut"].resize((SIDE, SIDE), Image.LANCZOS), fmt="JPEG", quality=90)
    array = np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))
    expected = pdq_hex(bits_to_int(pdqhash.compute(array)[0]))

    floor, decode = [], []
    for n in range(warmup + requests_count):
        started = time.perf_counter()
        pdqhash.compute(array)
        compute_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        pdqhash.compute(np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB")))
        hashlib.md5(jpeg).hexdigest()
        decode_ms = (time.perf_counter() - started) * 1000
        if n >= warmup:
            floor.append(compute_ms)
            decode.append(decode_ms)

    platform = _account("bench-media-platform", Role.PLATFORM)
    token = ApiToken.issue(user=platform, name="bench media hash")[1]
    port = processes.free_port()
    server = processes.start_gunicorn(port)
    url = f"http://127.0.0.1:{port}/api/v1/media/hash"
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg"})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                response = session.post(url, data=jpeg, timeout=30)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        if response.status_code != 200:
            raise RuntimeError(f"POST /api/v1/media/hash answered {response.status_code}: {response.text[:300]}")
        answer = response.json()
        samples = []
        for n in range(warmup + requests_count):
            started = time.perf_counter()
            response = session.post(url, data=jpeg, timeout=30)
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"POST /api/v1/media/hash answered {response.status_code}")
            if n >= warmup:
                samples.append(elapsed)
    finally:
        processes.stop(server)
    rate, floor_rate = _rate(samples), _rate(floor)
    same = answer.get("pdq") == expected and answer.get("md5") == hashlib.md5(jpeg).hexdigest()
    return Figure(
        name="POST /api/v1/media/hash, 1-megapixel JPEG, 1 sync gunicorn worker", value=rate, unit="images/s",
        floor=floor_rate, floor_name="pdqhash.compute on the decoded array, in a loop", ratio=rate / floor_rate,
        informational=True,
        notes=[f"A {SIDE} x {SIDE} JPEG of scikit-image's astronaut ({len(jpeg) / 1024:,.0f} KiB), POSTed as raw bytes "
               f"one at a time: {summary_ms(samples)}.",
               f"Floor, pdqhash.compute on the decoded array: {summary_ms(floor)}; decoding the JPEG (Pillow), "
               f"hashing it and its MD5 in the same loop: {summary_ms(decode)} ({_rate(decode):,.1f} images/s).",
               f"The endpoint's answer {'matches' if same else 'DIFFERS from'} pdqhash's own PDQ and the file's MD5 "
               f"(quality {answer.get('quality')})."],
    )
