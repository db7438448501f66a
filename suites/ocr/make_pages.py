#!/usr/bin/env python3
"""Render the four synthetic handwritten pages of the OCR suite.

Writes pages/page-1.png ... pages/page-4.png and truth.json next to this
script. Deterministic: fixed RNG seeds, no clock, no environment input, so a
second run gives byte-identical files (for the same Pillow build and fonts;
see README.md for the pinned versions and font digests).

Requirements
  Python 3.11+, Pillow (PyPI: `pip install Pillow==13.0.0`)
  Debian font packages (fonts are read from /usr/share/fonts):
    apt-get install fonts-dkg-handwriting fonts-sjfonts fonts-breip fonts-dancingscript

Usage
  python3 make_pages.py            # render pages and truth.json
  python3 make_pages.py --check    # also print sha256 of every output
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
from pathlib import Path

try:
    from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont
except ImportError:  # pragma: no cover
    sys.exit("make_pages.py: Pillow is missing; install it with `pip install Pillow==13.0.0`")

HERE = Path(__file__).resolve().parent
FONT_ROOTS = ("/usr/share/fonts", "/usr/local/share/fonts")

# hand name -> (Debian package, file name under FONT_ROOTS, sha256 of the file we rendered with)
FONTS = {
    "dkg": ("fonts-dkg-handwriting", "dkg.ttf",
            "93eb07f57b84f04fa975ebf49ecec43d9b2c85834a9b63864072c6b993efd131"),
    "steve": ("fonts-sjfonts", "SteveHand.ttf",
              "51e0820b832b2cd3db9dc9a759520c868166ae291f19afc3d94689e668d0435e"),
    "breip": ("fonts-breip", "Breip.ttf",
              "cded2aeeeb7d35baa8aa5b57df35a25836910498271d3d2eec502f6aa7033eb7"),
    "dancing": ("fonts-dancingscript", "DancingScript-Regular.otf",
                "38178945aaefdea573f4998d8b984985aaebb95964da337b23e77e682d7d3d17"),
}

# Page text. One entry per handwritten line; ~~word~~ marks a word that is
# drawn and then struck through (exactly one word per pair).
PAGES = [
    {
        "id": "page-1", "kind": "letter", "hand": "dkg", "paper": "margin",
        "ink": (28, 40, 105), "size": 42, "seed": 1101, "pen": 2.5,
        "lines": [
            "Tuesday, 14 May",
            "Dear Sam,",
            "Thank you for the lovely postcard from Lisbon,",
            "it made me smile all week. We have finally moved",
            "into the new flat on Cedar Road, number 27, and",
            "the kitchen is twice the size of the old one.",
            "Come and stay in ~~June~~ July if you can, the spare",
            "room will be painted by then. Nora says hello",
            "and wants to show you her tomatoes. The train",
            "from York takes about two hours and we can",
            "meet you at the station.",
            "Write soon!",
            "Love, Helen",
        ],
    },
    {
        "id": "page-2", "kind": "list", "hand": "steve", "paper": "plain",
        "ink": (22, 22, 30), "size": 40, "seed": 2202, "pen": 3,
        "lines": [
            "Saturday shopping",
            "2 kg potatoes",
            "6 eggs (free range)",
            "1 loaf of ~~white~~ brown bread",
            "500 g minced beef",
            "3 lemons and 2 litres of milk",
            "coffee beans for Peter",
            "birthday card for Jess",
            "To do",
            "pay the gas bill, 48.20, by Friday",
            "return library books",
            "call Dr Patel about the ~~blood~~ test results",
            "fix the back gate",
            "book train to Leeds, 9.15 on Sunday",
            "water the plants before we go",
        ],
    },
    {
        "id": "page-3", "kind": "notes", "hand": "breip", "paper": "margin",
        "ink": (20, 30, 80), "size": 44, "seed": 3303, "pen": 2,
        "lines": [
            "Fair committee, 3 October 2024",
            "Present: Anna Kowalski, Tom Reed, Priya Shah",
            "1. Budget for the spring fair is 1200 pounds.",
            "Tom to confirm with the school by Friday.",
            "2. Anna will order 40 chairs and",
            "~~eight~~ ten tables from the hire shop.",
            "3. Priya has a draft poster, print 150 copies.",
            "4. Raffle prizes still needed, ask the bakery",
            "on Mill Street and the garden centre.",
            "5. Tom asked about insurance, Anna to check.",
            "Next meeting Thursday 17 October, 7 pm,",
            "in the library.",
        ],
    },
    {
        "id": "page-4", "kind": "recipe", "hand": "dancing", "paper": "plain",
        "ink": (35, 35, 60), "size": 44, "seed": 4404, "pen": 2.5,
        "lines": [
            "Grandma Rose's apple crumble",
            "Serves 6, oven at 180 degrees.",
            "Peel and slice 5 large apples and put them",
            "in a buttered dish with 2 spoons of ~~honey~~ sugar",
            "and a pinch of cinnamon. Rub 150 g flour",
            "with 100 g cold butter until it looks like sand,",
            "then stir in 75 g brown sugar. Spread it over",
            "the apples and bake for ~~30~~ 40 minutes until",
            "golden. Serve warm with custard.",
            "Tip: add some blackberries in September.",
            "It keeps for 2 days in the fridge.",
        ],
    },
]

# How each struck word is crossed out, in page order.
STRIKE_STYLES = {
    ("page-1", "June"): "single",
    ("page-2", "white"): "double",
    ("page-2", "blood"): "single",
    ("page-3", "eight"): "double",
    ("page-4", "honey"): "single",
    ("page-4", "30"): "scribble",
}

DESCRIPTION = ("Four synthetic handwritten pages (letter, shopping and to-do list, "
               "meeting notes, recipe) rendered from handwriting fonts on ruled paper, "
               "with six words crossed out by drawn pen strokes.")

SCALE = 2                  # render at 2x, downsample at the end (anti-aliasing)
W, H = 1100, 1500          # output page size in px
LINE_GAP = 76              # ruled line spacing in px (output scale)
TOP = 150                  # first ruled line (output scale)
MARGIN_X = 118             # red margin position (output scale)
PALETTE_COLOURS = 64
GRAIN = 3                  # sigma of the fine paper grain


def fail(msg: str) -> None:
    sys.exit(f"make_pages.py: {msg}")


def find_font(hand: str) -> Path:
    pkg, name, _ = FONTS[hand]
    hits: list[Path] = []
    for root in FONT_ROOTS:
        if os.path.isdir(root):
            for dirpath, _dirs, files in os.walk(root):
                if name in files:
                    hits.append(Path(dirpath) / name)
    if not hits:
        fail(f"font {name} not found under {', '.join(FONT_ROOTS)}; "
             f"install it with `apt-get install {pkg}`")
    return sorted(hits)[0]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def parse_line(line: str) -> list[tuple[str, bool]]:
    words = []
    for tok in line.split(" "):
        if tok.startswith("~~") and tok.endswith("~~") and len(tok) > 4:
            words.append((tok[2:-2], True))
        elif "~~" in tok:
            fail(f"bad strike markup {tok!r}: use ~~word~~ around exactly one word")
        else:
            words.append((tok, False))
    return words


# ---------------------------------------------------------------- paper

def make_paper(rng: random.Random, kind: str) -> Image.Image:
    w, h = W * SCALE, H * SCALE
    base = (247, 245, 236) if kind == "margin" else (250, 248, 242)
    paper = Image.new("RGB", (w, h), base)
    # soft uneven tint: low-resolution noise blown up and blurred
    small = Image.new("L", (22, 30))
    small.putdata([int(128 + rng.gauss(0, 30)) for _ in range(22 * 30)])
    tint = small.resize((w, h), Image.BICUBIC).filter(ImageFilter.GaussianBlur(40))
    shade = Image.new("RGB", (w, h), (232, 226, 208))
    mask = tint.point(lambda v: max(0, min(255, int((v - 128) * 0.9 + 40))))
    paper = Image.composite(shade, paper, mask)
    d = ImageDraw.Draw(paper)
    # ruled lines, faint blue, slightly uneven
    y = TOP * SCALE
    while y < (H - 40) * SCALE:
        col = (168 + rng.randint(-6, 6), 192 + rng.randint(-6, 6), 222 + rng.randint(-4, 4))
        d.line([(0, y), (w, y + rng.randint(-2, 2))], fill=col, width=2 * SCALE // 2 + 1)
        y += LINE_GAP * SCALE
    if kind == "margin":
        for dx in (0, 5 * SCALE):
            d.line([(MARGIN_X * SCALE + dx, 0), (MARGIN_X * SCALE + dx, h)],
                   fill=(222, 120, 120), width=SCALE + 1)
    return paper


# ---------------------------------------------------------------- ink

def render_word(font: ImageFont.FreeTypeFont, text: str, angle: float) -> tuple[Image.Image, int]:
    """Alpha mask of one word, rotated; returns (mask, baseline offset from top)."""
    asc, desc = font.getmetrics()
    l, t, r, b = font.getbbox(text)
    pad = 12 * SCALE
    im = Image.new("L", (r - min(l, 0) + 2 * pad, asc + desc + 2 * pad), 0)
    ImageDraw.Draw(im).text((pad - min(l, 0), pad), text, font=font, fill=255)
    baseline = pad + asc
    if abs(angle) > 0.01:
        cx, cy = im.width / 2, baseline
        im = im.rotate(angle, resample=Image.BICUBIC, center=(cx, cy))
    return im, baseline


def wavy_points(rng, x0, y0, x1, y1, amp, n=7):
    pts = []
    phase = rng.uniform(0, math.tau)
    for i in range(n + 1):
        t = i / n
        x = x0 + (x1 - x0) * t
        y = y0 + (y1 - y0) * t + amp * math.sin(phase + t * math.pi * rng.uniform(1.2, 1.8))
        pts.append((x, y + rng.uniform(-amp * 0.3, amp * 0.3)))
    return pts


def pen_line(d: ImageDraw.ImageDraw, pts, width: int) -> None:
    d.line(pts, fill=255, width=width, joint="curve")
    r = width / 2
    for x, y in (pts[0], pts[-1]):
        d.ellipse([x - r, y - r, x + r, y + r], fill=255)


def strike(rng: random.Random, mask: Image.Image, style: str, pen: int) -> tuple[int, int, int, int]:
    """Draw strike strokes over the ink already in mask; return the word box."""
    box = mask.getbbox()
    if box is None:
        fail("empty word mask")
    x0, y0, x1, y1 = box
    # the core of the letters: weighted centre of ink rows
    hist = []
    for y in range(y0, y1):
        counts = mask.crop((x0, y, x1, y + 1)).histogram()
        hist.append(sum(i * c for i, c in enumerate(counts)))
    tot = sum(hist) or 1
    yc = y0 + sum(i * v for i, v in enumerate(hist)) / tot
    hgt = y1 - y0
    d = ImageDraw.Draw(mask)
    over_l = rng.uniform(5, 12) * SCALE
    over_r = rng.uniform(5, 14) * SCALE
    if style == "single":
        tilt = rng.uniform(-0.12, 0.06) * hgt
        pen_line(d, wavy_points(rng, x0 - over_l, yc - tilt, x1 + over_r, yc + tilt,
                                amp=1.2 * SCALE), pen)
    elif style == "double":
        gap = max(0.2 * hgt, 2.6 * pen)
        for k, off in enumerate((-gap / 2, gap / 2)):
            tilt = rng.uniform(-0.08, 0.08) * hgt
            pen_line(d, wavy_points(rng, x0 - over_l + k * 4 * SCALE, yc + off - tilt,
                                    x1 + over_r - k * 3 * SCALE, yc + off + tilt,
                                    amp=1.0 * SCALE), pen)
    elif style == "scribble":
        # a coil of loops along the word, out and back, as a pen scribbling it out
        r = 0.34 * hgt
        span = x1 - x0 + over_l + over_r
        turns = max(5, round(span / (0.3 * hgt)))
        steps = turns * 16
        for sweep in (0,):  # one pass: the word stays half legible underneath
            pts = []
            ph1, ph2 = rng.uniform(0, math.tau), rng.uniform(0, math.tau)
            for i in range(steps + 1):
                t = i / steps
                a = t * turns * math.tau
                tx = t if sweep == 0 else 1 - t
                rr = r * (1 + 0.22 * math.sin(ph1 + a * 0.31)) + rng.uniform(-0.6, 0.6) * SCALE
                rr *= 1.0 if sweep == 0 else 0.8
                x = x0 - over_l + span * tx - rr * 0.55 * math.cos(a) + 0.25 * rr * math.sin(a)
                y = yc + 0.04 * hgt - rr * math.sin(a) + (tx - 0.5) * 0.12 * hgt \
                    + 0.08 * hgt * math.sin(ph2 + t * 5)
                pts.append((x, y))
            pen_line(d, pts, max(2, pen - sweep * SCALE // 2))
    else:
        fail(f"unknown strike style {style}")
    return box


def ink_texture(rng: random.Random, size) -> Image.Image:
    small = Image.new("L", (max(1, size[0] // 24), max(1, size[1] // 24)))
    small.putdata([int(rng.uniform(205, 255)) for _ in range(small.width * small.height)])
    return small.resize(size, Image.BICUBIC)


def render_page(page: dict) -> tuple[Image.Image, list[dict]]:
    rng = random.Random(page["seed"])
    paper = make_paper(rng, page["paper"])
    ink_layer = Image.new("L", paper.size, 0)           # coverage of ink
    ink_rgb = Image.new("RGB", paper.size, page["ink"])  # per-word colour
    colour_draw = ImageDraw.Draw(ink_rgb)
    font_path = find_font(page["hand"])
    base_size = page["size"] * SCALE
    fonts = {}

    def font_at(sz: int) -> ImageFont.FreeTypeFont:
        if sz not in fonts:
            fonts[sz] = ImageFont.truetype(str(font_path), sz, layout_engine=ImageFont.Layout.BASIC)
        return fonts[sz]

    left = (MARGIN_X + 18) if page["paper"] == "margin" else 64
    right = W - 46
    pen = round(page["pen"] * SCALE)  # strike pen width (output px), matched to the hand
    struck = []
    for li, line in enumerate(page["lines"]):
        words = parse_line(line)
        # line li sits on ruled line li+1 (the first ruled line stays empty)
        baseline = (TOP + LINE_GAP * (li + 1)) * SCALE - rng.uniform(4, 9) * SCALE
        drift = rng.uniform(-0.012, 0.012)   # line slope
        x = (left + rng.uniform(-4, 10)) * SCALE
        if page["kind"] == "letter" and li == 0:
            x = (W - 360) * SCALE             # date at the top right
        if page["kind"] in ("list", "recipe") and li == 0:
            x = (left + 150) * SCALE          # centred-ish title
        x_start = x
        for word, is_struck in words:
            sz = int(base_size * rng.uniform(0.94, 1.06))
            angle = rng.uniform(-1.8, 1.8)
            mask, bl = render_word(font_at(sz), word, angle)
            box = mask.getbbox()
            if box is None:
                fail(f"font {font_path.name} drew nothing for {word!r}")
            if is_struck:
                style = STRIKE_STYLES.get((page["id"], word))
                if style is None:
                    fail(f"no strike style for {(page['id'], word)}")
                strike(rng, mask, style, pen)
            box = mask.getbbox()
            dy = (x - x_start) * drift + rng.uniform(-2.5, 2.5) * SCALE
            px = int(x - box[0])
            py = int(baseline + dy - bl)
            if (px + box[2]) / SCALE > right:
                fail(f"{page['id']} line {li + 1} runs past the right edge; shorten it: {line!r}")
            if is_struck:
                struck.append({"page": page["id"], "line": li, "word": word, "style": style,
                               "box": tuple(int(v / SCALE) for v in
                                            (px + box[0], py + box[1], px + box[2], py + box[3]))})
            tone = rng.uniform(-14, 14)
            col = tuple(max(0, min(255, int(c + tone))) for c in page["ink"])
            alpha = ImageChops.multiply(mask, ink_texture(rng, mask.size))
            # colour: paint this word's colour under its mask, then add coverage
            colour_draw.bitmap((px, py), mask, fill=col)
            region = ink_layer.crop((px, py, px + mask.width, py + mask.height))
            ink_layer.paste(ImageChops.lighter(region, alpha), (px, py))
            x = px + box[2] + rng.uniform(0.30, 0.48) * sz
    ink_layer = ink_layer.point(lambda v: int(v * 0.93))
    page_im = Image.composite(ink_rgb, paper, ink_layer)
    # slight scan skew, then downsample
    page_im = page_im.rotate(rng.uniform(-0.35, 0.35), resample=Image.BICUBIC,
                             fillcolor=(250, 248, 242))
    page_im = page_im.resize((W, H), Image.LANCZOS)
    # fine grain (kept light so the palette PNG stays small)
    grain = Image.new("L", (W // 3, H // 3))
    grain.putdata([int(rng.gauss(128, GRAIN)) for _ in range(grain.width * grain.height)])
    grain = grain.resize((W, H), Image.BILINEAR)
    # page - grain + 128: zero-mean grain, clipped to 0..255
    page_im = ImageChops.subtract(page_im, Image.merge("RGB", [grain] * 3), 1, 128)
    page_im = page_im.quantize(colors=PALETTE_COLOURS, method=Image.Quantize.FASTOCTREE,
                               dither=Image.Dither.NONE)
    return page_im, struck


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE), help="suite folder to write into (default: this folder)")
    ap.add_argument("--check", action="store_true", help="print sha256 of fonts and outputs")
    args = ap.parse_args()
    out = Path(args.out)
    (out / "pages").mkdir(parents=True, exist_ok=True)

    for hand, (pkg, name, want) in FONTS.items():
        got = sha256_file(find_font(hand))
        if want and got != want:
            print(f"warning: {name} ({pkg}) sha256 {got} differs from the pinned {want}; "
                  f"pages will not be byte-identical to the committed ones", file=sys.stderr)
        if args.check:
            print(f"font {hand:8s} {pkg:24s} {got}")

    truth_pages = []
    all_struck = []
    for page in PAGES:
        im, struck = render_page(page)
        rel = f"pages/{page['id']}.png"
        im.save(out / rel, optimize=True, compress_level=9)
        truth_pages.append({"id": page["id"], "image": rel, "kind": page["kind"],
                            "lines": page["lines"]})
        all_struck += struck
    if len(all_struck) != 6:
        fail(f"expected 6 struck words, drew {len(all_struck)}")
    truth = {"description": DESCRIPTION, "pages": truth_pages}
    (out / "truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    if args.check:
        for p in ["truth.json"] + [t["image"] for t in truth_pages]:
            f = out / p
            print(f"{sha256_file(f)}  {p}  {f.stat().st_size} bytes")
        for s in all_struck:
            print(f"struck {s['page']} line {s['line'] + 1}: {s['word']} ({s['style']}) near {s['box']}")


if __name__ == "__main__":
    main()
