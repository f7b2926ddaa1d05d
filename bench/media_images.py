"""Images for the media figures (issue 30): scikit-image's sample photographs, the transformations their
copies go through, and their PDQ hashes computed as the app computes them.

The photographs are every sample scikit-image ships in its wheel that is a photograph at least 128 pixels a
side: `cat` is left out (the same photograph as `chelsea`), so is the right view of `stereo_motorcycle` (the
left view shot a few centimetres away); drawings and synthetic images (logo, colorwheel, horse, phantom,
checkerboard, blobs) are not photographs, and `microaneurysms` and `lfw_subset` are 25 to 102 pixels a side.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cache

import numpy as np
import pdqhash
from PIL import Image, ImageDraw, ImageEnhance, ImageFont

PHOTOGRAPHS = ("astronaut", "brick", "camera", "chelsea", "clock", "coffee", "coins", "grass", "gravel",
               "hubble_deep_field", "immunohistochemistry", "moon", "page", "retina", "rocket", "text",
               "stereo_motorcycle")


def photographs() -> dict[str, Image.Image]:
    """The sample photographs as RGB images, by name (no download: all ship inside scikit-image)."""
    from skimage import data

    images = {}
    for name in PHOTOGRAPHS:
        array = getattr(data, name)()
        array = array[0] if isinstance(array, tuple) else array  # stereo_motorcycle: (left, right, disparity)
        images[name] = Image.fromarray(array).convert("RGB")
    return images


def encode(image: Image.Image, *, fmt: str = "PNG", quality: int = 90) -> bytes:
    out = io.BytesIO()
    # PNG at zlib level 1: lossless as any level, and five times faster to write than Pillow's default 6.
    image.save(out, format=fmt, **({"quality": quality} if fmt == "JPEG" else {"compress_level": 1}))
    return out.getvalue()


def bits_to_int(bits: np.ndarray) -> int:
    """pdqhash's 256-bit vector as the int of its hex form (factcheck.media: the first bit is the highest)."""
    return int.from_bytes(np.packbits(bits.astype(np.uint8)).tobytes(), "big")


def _direct(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        array = np.asarray(image.convert("RGB"))
    bits, quality = pdqhash.compute(array)
    return bits_to_int(bits), int(quality)


@cache
def hasher() -> tuple[Callable[[bytes], tuple[int, int]], str]:
    """What hashes an image's bytes to (PDQ as an int, quality): the app's own code when it is there."""
    try:
        from factcheck.media_hashing import hash_image
    except ImportError:
        return _direct, "pdqhash.compute on the decoded RGB array (factcheck.media_hashing.hash_image absent)"

    from factcheck.media import pdq_int

    def app(data: bytes) -> tuple[int, int]:
        hashed = hash_image(data)
        return pdq_int(hashed.pdq), hashed.quality

    return app, "factcheck.media_hashing.hash_image on the encoded bytes, as POST /api/v1/media/hash runs it"


def dihedral(data: bytes) -> list[int]:
    """PDQ of the image and of its 7 other dihedral variants (rotations by 90 degrees, flips)."""
    with Image.open(io.BytesIO(data)) as image:
        array = np.asarray(image.convert("RGB"))
    hashes, _qualities = pdqhash.compute_dihedral(array)
    return [bits_to_int(h) for h in hashes]


# --- the transformations: each takes an image and answers (variant label, copy as bytes) pairs -----------

def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(size, 10))


def _resize(image: Image.Image) -> list[tuple[str, bytes]]:
    w, h = image.size
    return [(f"x{s:g}", encode(image.resize((max(1, round(w * s)), max(1, round(h * s))), Image.LANCZOS)))
            for s in (0.25, 0.5, 0.75, 1.5)]


def _jpeg(image: Image.Image) -> list[tuple[str, bytes]]:
    return [(f"q{q}", encode(image, fmt="JPEG", quality=q)) for q in (10, 20, 30)]


def _light(image: Image.Image) -> list[tuple[str, bytes]]:
    out = []
    for b, c in ((0.7, 1.0), (1.3, 1.0), (1.0, 0.7), (1.0, 1.3), (1.2, 1.2), (0.8, 0.8)):
        copy = ImageEnhance.Contrast(ImageEnhance.Brightness(image).enhance(b)).enhance(c)
        out.append((f"brightness {b:g} contrast {c:g}", encode(copy)))
    return out


def _caption(image: Image.Image) -> list[tuple[str, bytes]]:
    """A meme's caption in Pillow's default font (white, black outline), a tenth of the height tall, at the top,
    the bottom or both; and a credit line a 25th of the height tall at the bottom."""
    w, h = image.size
    out = []
    for label, lines in (("small, bottom", [("photo: Daily Truth Page", 0.93)]),
                         ("top", [("SHARE BEFORE THEY DELETE THIS", 0.03)]),
                         ("bottom", [("they don't want you to know", 0.85)]),
                         ("top and bottom", [("BREAKING NEWS", 0.03), ("100% REAL. NOT FAKE.", 0.85)])):
        copy = image.copy()
        draw = ImageDraw.Draw(copy)
        for text, y in lines:
            size = h // 25 if label.startswith("small") else h // 10
            while size > 10 and draw.textlength(text, font=_font(size)) > 0.94 * w:
                size -= 2
            font = _font(size)
            x = (w - draw.textlength(text, font=font)) / 2
            draw.text((x, y * h), text, font=font, fill="white", stroke_width=max(1, size // 12), stroke_fill="black")
        out.append((label, encode(copy)))
    return out


def _trim(image: Image.Image) -> list[tuple[str, bytes]]:
    """1% of the width or height cut off one edge."""
    w, h = image.size
    dx, dy = max(1, round(w * 0.01)), max(1, round(h * 0.01))
    boxes = {"left": (dx, 0, w, h), "right": (0, 0, w - dx, h), "top": (0, dy, w, h), "bottom": (0, 0, w, h - dy)}
    return [(edge, encode(image.crop(box))) for edge, box in boxes.items()]


def _crop(image: Image.Image) -> list[tuple[str, bytes]]:
    """p% of the width and height cut away: centred (p/2 off each side) and off one corner (p off the top left)."""
    w, h = image.size
    out = []
    for p in (2, 3, 4, 5):
        dx, dy = round(w * p / 100), round(h * p / 100)
        out.append((f"{p}% centred", encode(image.crop((dx // 2, dy // 2, w - (dx - dx // 2), h - (dy - dy // 2))))))
        out.append((f"{p}% corner", encode(image.crop((dx, dy, w, h)))))
    return out


def _rotate(image: Image.Image) -> list[tuple[str, bytes]]:
    """Turned by a few degrees in place, the corners filled black, as a photographed print would be."""
    return [(f"{a:+g} deg", encode(image.rotate(a, resample=Image.BICUBIC, expand=False))) for a in (2, 3, 5, -3)]


def _mirror(image: Image.Image) -> list[tuple[str, bytes]]:
    return [("left-right", encode(image.transpose(Image.FLIP_LEFT_RIGHT)))]


def _screenshot(image: Image.Image) -> list[tuple[str, bytes]]:
    """The picture inside a frame: a thin white border, and a phone screenshot of a post (status bar, the
    poster's name above, the reactions below, the picture 92% of the screen's width)."""
    w, h = image.size
    out = []
    pad = round(0.05 * w)
    bordered = Image.new("RGB", (w + 2 * pad, h + 2 * pad), "white")
    bordered.paste(image, (pad, pad))
    out.append(("5% white border", encode(bordered)))
    sw = round(w / 0.92)
    inner = (sw - w) // 2
    top, bottom = round(0.18 * sw), round(0.3 * sw)
    screen = Image.new("RGB", (sw, top + h + bottom), (250, 250, 250))
    draw = ImageDraw.Draw(screen)
    draw.rectangle((0, 0, sw, round(0.05 * sw)), fill=(20, 20, 20))
    draw.text((inner, round(0.01 * sw)), "9:41        LTE  87%", font=_font(round(0.03 * sw)), fill="white")
    draw.ellipse((inner, round(0.07 * sw), inner + round(0.08 * sw), round(0.15 * sw)), fill=(90, 120, 200))
    draw.text((inner + round(0.1 * sw), round(0.09 * sw)), "Daily Truth Page · 2 h", font=_font(round(0.04 * sw)),
              fill="black")
    screen.paste(image, (inner, top))
    draw.text((inner, top + h + round(0.03 * sw)), "12K likes   3.4K comments   9.8K shares",
              font=_font(round(0.04 * sw)), fill=(60, 60, 60))
    out.append(("phone screenshot of a post", encode(screen)))
    return out


# In the order; the first five are what PDQ is built for (target: recall >= 0.9).
TRANSFORMATIONS: dict[str, Callable[[Image.Image], list[tuple[str, bytes]]]] = {
    "resize": _resize,
    "JPEG at low quality": _jpeg,
    "brightness and contrast": _light,
    "text caption": _caption,
    "1% trimmed edge": _trim,
    "crop of 2-5%": _crop,
    "small rotation (2-5 degrees)": _rotate,
    "mirror": _mirror,
    "screenshot-like border": _screenshot,
}
TARGETED = tuple(TRANSFORMATIONS)[:5]


def generated_images(count: int, *, seed: int = 30, size: int = 400) -> list[bytes]:
    """Unrelated images the bench draws itself (no two alike): random overlapping shapes and lines in random
    colours over a random two-colour gradient, with a little noise; PNG bytes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
        t = np.linspace(0, 1, size)[None, :, None] if rng.random() < 0.5 else np.linspace(0, 1, size)[:, None, None]
        base = (c0 * (1 - t) + c1 * t) * np.ones((size, size, 1))
        image = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
        draw = ImageDraw.Draw(image)
        for _ in range(int(rng.integers(6, 16))):
            xs, ys = sorted(int(v) for v in rng.integers(0, size, 2)), sorted(int(v) for v in rng.integers(0, size, 2))
            box = (xs[0], ys[0], xs[1], ys[1])
            colour = tuple(int(v) for v in rng.integers(0, 256, 3))
            shape = rng.integers(0, 3)
            if shape == 0:
                draw.rectangle(box, fill=colour)
            elif shape == 1:
                draw.ellipse(box, fill=colour)
            else:
                draw.line(box, fill=colour, width=int(rng.integers(2, 20)))
        noisy = np.asarray(image).astype(np.int16) + rng.integers(-8, 9, (size, size, 3))
        out.append(encode(Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))))
    return out
