"""The report's chart drawing: plain SVG written directly (axes, ticks, bars, lines, legends), its text
as glyph outlines (matplotlib's font-to-path conversion of DejaVu Sans, each glyph defined once per
page and placed with <use>), so the page needs no fonts, scripts or network. Drawing a chart this way
takes about a millisecond; a matplotlib figure saved to SVG took ~100 ms, which made `report` over 200
tables take 74 s (docs/measurements.md)."""

from __future__ import annotations

import math
from html import escape

W, H = 690, 270  # px: the 7.2 x 2.8 in figures at 96 dpi the charts were before
LEFT, RIGHT, TOP, BOTTOM = 62, 12, 28, 58  # the plot area's margins (room for rotated tick labels)
AXIS = "#333"


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


class Glyphs:
    """The glyph outlines a page's charts use, each defined once (`defs()` goes into the page)."""

    def __init__(self) -> None:
        from matplotlib.font_manager import FontProperties, findfont, get_font
        from matplotlib.textpath import text_to_path

        self.t2p = text_to_path
        self.font = get_font(findfont(FontProperties(family="DejaVu Sans")))
        self.font.set_size(text_to_path.FONT_SCALE, text_to_path.DPI)  # glyphs in units of 1/100 font size
        self.paths: dict[str, str] = {}
        self.layouts: dict[str, tuple[list[tuple[str, float]], float]] = {}

    def layout(self, s: str) -> tuple[list[tuple[str, float]], float]:
        """(glyph id, x) of each glyph of `s` and its width, in font units (100 = the font size)."""
        if s not in self.layouts:
            info, new, _ = self.t2p.get_glyphs_with_font(self.font, s, glyph_map=None, return_new_glyphs_only=True)
            for gid, (verts, codes) in new.items():
                if gid not in self.paths:
                    self.paths[gid] = _path_d(verts, codes)
            self.font.set_text(s, 0.0)
            self.layouts[s] = ([(gid, x) for gid, x, _y, _s in info], self.font.get_width_height()[0] / 64.0)
        return self.layouts[s]

    def defs(self) -> str:
        """One hidden SVG holding every glyph used, for the charts' <use href="#g-...">."""
        body = "".join(f'<path id="g-{escape(g)}" d="{d}"/>' for g, d in sorted(self.paths.items()))
        return (f'<svg width="0" height="0" style="position:absolute" aria-hidden="true">'
                f"<defs>{body}</defs></svg>")


def _path_d(verts, codes) -> str:
    out, i = [], 0
    pts = [(round(float(x), 1), round(float(y), 1)) for x, y in verts]
    letters = {1: ("M", 1), 2: ("L", 1), 3: ("Q", 2), 4: ("C", 3)}
    while i < len(pts):
        code = int(codes[i])
        if code == 79:  # CLOSEPOLY
            out.append("Z")
            i += 1
            continue
        letter, n = letters[code]
        out.append(letter + " ".join(f"{_num(x)} {_num(y)}" for x, y in pts[i:i + n]))
        i += n
    return "".join(out)


def nice_ticks(lo: float, hi: float, integer: bool = False, most: int = 6) -> list[float]:
    """Round tick values covering [lo, hi]: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / most
    mag = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)
    step = next(m * mag for m in steps if m * mag >= raw)
    if integer:
        step = max(1.0, round(step))
    first = math.floor(lo / step) * step
    ticks = [round(first, 10)]
    while ticks[-1] < hi - step * 1e-9:  # the last tick at or past hi
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def tick_label(v: float, step: float) -> str:
    if step >= 1 and float(v).is_integer():
        return f"{int(v):,}"
    decimals = max(0, -math.floor(math.log10(step))) + (1 if step * 10 ** -math.floor(math.log10(step)) == 2.5 else 0)
    return f"{v:,.{decimals}f}"


class Chart:
    """One chart: a titled plot area with a y scale (linear or symlog) and x either categorical
    (0..n-1) or linear; `svg()` gives the element."""

    def __init__(self, glyphs: Glyphs, title: str) -> None:
        self.g = glyphs
        self.parts: list[str] = []
        self.x0, self.x1, self.y0, self.y1 = LEFT, W - RIGHT, H - BOTTOM, TOP
        self.xlo, self.xhi, self.ylo, self.yhi = 0.0, 1.0, 0.0, 1.0
        self.symlog = False
        self.text(title, 4, 15, 13)

    # text -----------------------------------------------------------------------------------------
    def text(self, s: str, x: float, y: float, px: float, anchor: str = "start", color: str = "#000",
             rotate: float = 0.0) -> None:
        """`s` with its baseline at y, starting, centred or ending at x; rotated counter-clockwise."""
        glyphs, width = self.g.layout(s)
        k = px / 100.0
        shift = {"start": 0.0, "middle": -width / 2, "end": -width}[anchor]
        uses = "".join(f'<use href="#g-{escape(gid)}" x="{_num(gx + shift)}"/>' for gid, gx in glyphs)
        turn = f" rotate({_num(-rotate)})" if rotate else ""
        self.parts.append(f'<g fill="{color}" transform="translate({_num(x)} {_num(y)}){turn} '
                          f'scale({k:.4g} {-k:.4g})">{uses}</g>')

    # scales ---------------------------------------------------------------------------------------
    def _fy(self, v: float) -> float:
        return math.copysign(math.log10(1 + abs(v)), v) if self.symlog else v

    def px(self, x: float) -> float:
        return self.x0 + (x - self.xlo) / (self.xhi - self.xlo) * (self.x1 - self.x0)

    def py(self, y: float) -> float:
        lo, hi = self._fy(self.ylo), self._fy(self.yhi)
        return self.y0 - (self._fy(y) - lo) / ((hi - lo) or 1.0) * (self.y0 - self.y1)

    def categories(self, n: int) -> None:
        self.xlo, self.xhi = -0.6, max(0, n - 1) + 0.6

    def y_range(self, hi: float, integer: bool = False, symlog: bool = False, label: str = "") -> None:
        """A y axis from 0 to hi (ticks rounded up past it), drawn with its ticks and label."""
        self.symlog = symlog
        if symlog:
            top = 10 ** math.ceil(math.log10(max(hi, 1)))
            ticks = [0.0] + [10.0 ** e for e in range(0, int(math.log10(top)) + 1)]
        else:
            ticks = nice_ticks(0.0, hi if hi > 0 else 1.0, integer)
        self.ylo, self.yhi = 0.0, ticks[-1]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        for t in ticks:
            y = self.py(t)
            self.line(self.x0 - 4, y, self.x0, y)
            self.text(f"{int(t):,}" if symlog else tick_label(t, step), self.x0 - 6, y + 3.5, 10, "end")
        self.line(self.x0, self.y0, self.x0, self.y1)
        if label:
            self.text(label, 12, (self.y0 + self.y1) / 2, 11, "middle", rotate=90)

    def x_labels(self, labels: list[str]) -> None:
        """Category labels, at most about 12 of them, rotated 30 degrees."""
        self.line(self.x0, self.y0, self.x1, self.y0)
        step = max(1, len(labels) // 12)
        for i in range(0, len(labels), step):
            x = self.px(i)
            self.line(x, self.y0, x, self.y0 + 4)
            self.text(labels[i], x + 3, self.y0 + 13, 9.3, "end", rotate=30)

    def x_linear(self, lo: float, hi: float, label: str) -> None:
        ticks = nice_ticks(lo, hi)
        self.xlo, self.xhi = min(lo, ticks[0]), max(hi, ticks[-1])
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        self.line(self.x0, self.y0, self.x1, self.y0)
        for t in ticks:
            x = self.px(t)
            self.line(x, self.y0, x, self.y0 + 4)
            self.text(tick_label(t, step), x, self.y0 + 16, 10, "middle")
        self.text(label, (self.x0 + self.x1) / 2, self.y0 + 32, 11, "middle")

    # marks ----------------------------------------------------------------------------------------
    def line(self, xa: float, ya: float, xb: float, yb: float, color: str = AXIS, width: float = 1.0,
             dash: str = "") -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<path d="M{_num(xa)} {_num(ya)}L{_num(xb)} {_num(yb)}" stroke="{color}" '
                          f'stroke-width="{width}"{d} fill="none"/>')

    def bar(self, x0: float, x1: float, lo: float, hi: float, color: str) -> None:
        """A bar between data x0 and x1, from value lo to hi."""
        if hi <= lo:
            return
        top, bottom = self.py(hi), self.py(lo)
        self.parts.append(f'<rect x="{_num(self.px(x0))}" y="{_num(top)}" width="{_num(self.px(x1) - self.px(x0))}" '
                          f'height="{_num(max(0.5, bottom - top))}" fill="{color}"/>')

    def polyline(self, xs: list[float], ys: list[float], color: str, marker: float = 0.0) -> None:
        pts = [(self.px(x), self.py(y)) for x, y in zip(xs, ys, strict=True)]
        d = "".join(("M" if i == 0 else "L") + f"{_num(x)} {_num(y)}" for i, (x, y) in enumerate(pts))
        self.parts.append(f'<path d="{d}" stroke="{color}" stroke-width="1.5" fill="none"/>')
        for x, y in pts if marker else []:
            self.parts.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{marker}" fill="{color}"/>')

    def vline(self, x: float, color: str, width: float) -> None:
        self.line(self.px(x), self.y0, self.px(x), self.y1, color, width, "1.5 2.5")

    def legend(self, items: list[tuple[str, str]]) -> None:
        """Swatches and labels in one row at the top right."""
        x = float(self.x1)
        for label, color in reversed(items):
            _, width = self.g.layout(label)
            x -= width * 0.093 + 4
            self.text(label, x, TOP - 6, 9.3)
            x -= 14
            self.parts.append(f'<rect x="{_num(x)}" y="{TOP - 15}" width="10" height="10" fill="{color}"/>')
            x -= 8

    def empty(self, message: str) -> None:
        self.parts.append(f'<rect x="{self.x0}" y="{self.y1}" width="{self.x1 - self.x0}" '
                          f'height="{self.y0 - self.y1}" fill="none" stroke="{AXIS}" stroke-width="1"/>')
        self.text(message, (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2 + 4, 12, "middle", "#777")

    def svg(self) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
                f'role="img">{"".join(self.parts)}</svg>')
