"""The demo's pictures, drawn with Pillow from a seed (no downloads, no photographs): the same bytes every run.

- `shark_flood`: the altered picture of the demo, a shark on a flooded motorway (the shark was "pasted in"),
  rated `altered` in factcheck.demo_checks; `altered_copy` makes the copies that other pages post later:
  cropped by 3% on every side, re-encoded as a low-quality JPEG, a caption added, or all three. Each stays
  within PDQ distance 31 of the original (tests/media/test_media_demo.py measures it), so the rating reaches
  them by media matching.
- `street_flood`, `memo`, `still`: pictures for other posts, each drawn from its own seed, far from each other.

Pictures are 480 x 360 JPEGs: small files, hashed in a few milliseconds (factcheck.media_hashing).
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

WIDTH, HEIGHT = 480, 360
QUALITY = 85
LOW_QUALITY = 12  # "re-encoded at low quality": blocky, as a picture saved again by a messaging app looks
CROP = 0.03


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _jpeg(image: Image.Image, *, quality: int = QUALITY) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality, optimize=True)
    return out.getvalue()


def _gradient(top: tuple[int, int, int], bottom: tuple[int, int, int], height: int, *, seed: int) -> np.ndarray:
    """A vertical gradient with a little grain, as a camera's sensor gives it (a flat image hashes poorly)."""
    t = np.linspace(0, 1, height)[:, None, None]
    rows = np.array(top)[None, None, :] * (1 - t) + np.array(bottom)[None, None, :] * t
    grain = np.random.default_rng(seed).normal(0, 6, (height, WIDTH, 3))
    return np.clip(np.broadcast_to(rows, (height, WIDTH, 3)) + grain, 0, 255).astype(np.uint8)


def _street(rng: random.Random, *, seed: int, water: tuple[int, int, int], shark: bool) -> Image.Image:
    """A flooded street: sky, a skyline, a car's roof above the water; softened as a phone's photo is. Large
    shapes, so that the picture's PDQ hash, like a photograph's, lives in its low frequencies."""
    horizon = rng.randint(160, 185)
    sky = _gradient((rng.randint(70, 110), rng.randint(90, 120), rng.randint(130, 170)), (215, 205, 190), horizon,
                    seed=seed)
    flood = _gradient(water, tuple(max(0, c - 60) for c in water), HEIGHT - horizon, seed=seed + 1)
    image = Image.fromarray(np.vstack([sky, flood]))
    draw = ImageDraw.Draw(image)
    x = -10
    while x < WIDTH:  # the skyline: blocks of different heights
        width, height, shade = rng.randint(60, 130), rng.randint(50, 130), rng.randint(35, 70)
        draw.rectangle((x, horizon - height, x + width, horizon), fill=(shade, shade, shade + 8))
        x += width + rng.randint(0, 20)
    car = rng.randint(10, WIDTH - 140)
    if shark:
        car = 15  # beside the shark, not behind it
    draw.rounded_rectangle((car, horizon + 40, car + 120, horizon + 70), radius=10,
                           fill=(rng.randint(120, 200), rng.randint(30, 90), rng.randint(30, 90)))
    if shark:  # the part that was never there: a long grey body under the surface, its fin and tail above it
        draw.ellipse((150, 250, 350, 300), fill=(70, 78, 84))
        draw.polygon([(230, 262), (262, 190), (292, 262)], fill=(52, 58, 64))
        draw.polygon([(340, 275), (392, 236), (382, 300)], fill=(60, 66, 72))
    image = image.filter(ImageFilter.GaussianBlur(3))
    grain = np.random.default_rng(seed + 2).normal(0, 5, (HEIGHT, WIDTH, 3))
    return Image.fromarray(np.clip(np.asarray(image, dtype=float) + grain, 0, 255).astype(np.uint8))


# The seed of the altered picture: of the seeds tried, one whose copies stay well inside distance 31 (20 bits
# cropped, 24 with every change at once), as a photograph's do; a drawing's hard edges make others drift more.
SHARK_SEED = 36


def shark_flood() -> bytes:
    """The altered picture: a street flood with a shark that was never there."""
    return _jpeg(_street(random.Random(SHARK_SEED), seed=SHARK_SEED, water=(110, 112, 88), shark=True))


def altered_copy(original: bytes, *, crop: bool = False, low_quality: bool = False, caption: str = "") -> bytes:
    """A copy of `original` as it travels: cropped by CROP of its width and height (half of it off each side),
    a caption written over its foot (a meme's text), re-encoded at LOW_QUALITY; any of them together."""
    image = Image.open(io.BytesIO(original)).convert("RGB")
    if crop:
        dx, dy = round(image.width * CROP / 2), round(image.height * CROP / 2)
        image = image.crop((dx, dy, image.width - dx, image.height - dy))
    if caption:
        ImageDraw.Draw(image).text((image.width // 2, image.height - 34), caption, font=_font(24), anchor="mm",
                                   fill=(255, 255, 255), stroke_width=2, stroke_fill=(0, 0, 0))
    return _jpeg(image, quality=LOW_QUALITY if low_quality else QUALITY)


def street_flood(seed: int) -> bytes:
    """A street flood with no shark: another picture for each seed."""
    rng = random.Random(seed)
    water = (rng.randint(90, 150), rng.randint(80, 120), rng.randint(50, 90))
    return _jpeg(_street(rng, seed=seed, water=water, shark=False))


def memo(seed: int, *, title: str) -> bytes:
    """A photographed "leaked memo": a tilted page of text lines, a stamp."""
    rng = random.Random(seed)
    image = Image.fromarray(_gradient((rng.randint(60, 110),) * 3, (rng.randint(30, 60),) * 3, HEIGHT, seed=seed))
    page = Image.new("RGB", (300, 390), (246, 244, 236))
    draw = ImageDraw.Draw(page)
    draw.rectangle((0, 0, 300, 42), fill=(rng.randint(20, 60), rng.randint(40, 90), rng.randint(90, 150)))
    draw.text((14, 10), title, font=_font(18), fill=(255, 255, 255))
    y = 60
    while y < 370:
        draw.rectangle((18, y, 18 + rng.randint(140, 262), y + 5), fill=(110, 110, 118))
        y += rng.choice((13, 13, 13, 24))
    stamp = Image.new("RGBA", (170, 50), (0, 0, 0, 0))
    ImageDraw.Draw(stamp).rectangle((0, 0, 169, 49), outline=(200, 30, 30, 220), width=4)
    ImageDraw.Draw(stamp).text((14, 12), "CONFIDENTIAL", font=_font(20), fill=(200, 30, 30, 220))
    stamp = stamp.rotate(rng.randint(-20, 20), expand=True)
    page.paste(stamp, (rng.randint(60, 120), rng.randint(180, 280)), stamp)
    angle = rng.uniform(-12, 12)
    tilted = page.rotate(angle, expand=True)
    mask = Image.new("L", page.size, 255).rotate(angle, expand=True)
    image.paste(tilted, ((WIDTH - tilted.width) // 2, (HEIGHT - tilted.height) // 2 + 30), mask)
    return _jpeg(image)


def still(seed: int, *, banner: str) -> bytes:
    """A video's still: a room, a person at a desk, the channel's lower third."""
    rng = random.Random(seed)
    wall = (rng.randint(80, 170), rng.randint(80, 150), rng.randint(70, 140))
    image = Image.fromarray(_gradient(wall, tuple(c // 2 for c in wall), HEIGHT, seed=seed))
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(3, 6)):  # shelves, frames
        x, y = rng.randint(0, WIDTH - 80), rng.randint(10, 180)
        draw.rectangle((x, y, x + rng.randint(40, 110), y + rng.randint(20, 70)),
                       fill=(rng.randint(20, 230), rng.randint(20, 230), rng.randint(20, 230)))
    cx = rng.randint(160, 320)
    draw.ellipse((cx - 38, 92, cx + 38, 178), fill=(206, 170, 140))
    draw.rounded_rectangle((cx - 90, 170, cx + 90, HEIGHT), radius=40, fill=(rng.randint(20, 80),) * 3)
    draw.rectangle((0, 250, WIDTH, 262), fill=(120, 90, 60))
    draw.rectangle((0, HEIGHT - 58, WIDTH, HEIGHT - 18), fill=(200, 20, 30))
    draw.text((14, HEIGHT - 50), banner, font=_font(20), fill=(255, 255, 255))
    return _jpeg(image)
