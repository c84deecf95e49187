"""Charts as inline SVG, in plain Python (no JavaScript, nothing fetched when the page opens).

:func:`chart` draws one x-y chart of :class:`Series`: lines, points with vertical error bars, shaded bands
(an sd band around a line), an optional diagonal (the reliability diagram's perfect calibration) and a
legend. Each drawn point may carry ``data-*`` attributes, so a test can read the values a chart shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)


@dataclass
class Series:
    """One series of a chart. ``points``: (x, y) pairs drawn as a line (``line``) and/or as dots (``dots``);
    ``errors``: (x, low, high) vertical error bars; ``band``: (x, low, high) shaded behind the line;
    ``marks``: per point, the ``data-*`` attributes of its dot."""

    name: str
    points: list[tuple[float, float]]
    color: str = PALETTE[0]
    line: bool = True
    dots: bool = False
    errors: list[tuple[float, float, float]] = field(default_factory=list)
    band: list[tuple[float, float, float]] = field(default_factory=list)
    marks: list[dict[str, str]] = field(default_factory=list)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (steps of 1, 2 or 5 times a power of ten) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


def _format_tick(value: float) -> str:
    if value == 0:
        return "0"
    if value == int(value) and abs(value) < 1e9:
        return str(int(value))
    if abs(value) >= 1e9 or abs(value) < 0.001:
        return f"{value:.3g}"
    return f"{value:.6g}"


def _extent(values: list[float], pad: float = 0.04) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    if high == low:
        low, high = (
            low - 0.5 if low == 0 else low - abs(low) * 0.05,
            high + 0.5 if high == 0 else high + abs(high) * 0.05,
        )
    span = high - low
    return low - pad * span, high + pad * span


def _attributes(marks: dict[str, str]) -> str:
    return "".join(f' data-{escape(key)}="{escape(str(value))}"' for key, value in marks.items())


def chart(
    series: list[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    chart_id: str,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    diagonal: bool = False,
    width: int = 520,
    height: int = 320,
) -> str:
    """An ``<svg>`` chart of ``series`` (ranges from the data unless given)."""
    left, right, top, bottom = 62, 14, 28, 44
    legend_rows = len(series) if len(series) > 1 else 0
    height_total = height + 16 * legend_rows
    xs = [x for s in series for x, _ in s.points] + [x for s in series for x, _, _ in s.errors + s.band]
    ys = [y for s in series for _, y in s.points] + [
        v for s in series for _, lo, hi in s.errors + s.band for v in (lo, hi)
    ]
    x0, x1 = x_range or _extent(xs)
    y0, y1 = y_range or _extent(ys)
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + (1.0 - (y - y0) / (y1 - y0)) * plot_h

    def ok(*values: float) -> bool:
        return all(v is not None and math.isfinite(v) for v in values)

    parts = [
        f'<svg class="chart" id="{escape(chart_id)}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height_total}" viewBox="0 0 {width} {height_total}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height_total}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="17" text-anchor="middle" class="chart-title">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafa" stroke="#999999"/>',
    ]
    for tick in nice_ticks(x0, x1):
        x = px(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#e4e4e4"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle" class="tick">{_format_tick(tick)}</text>'
        )
    for tick in nice_ticks(y0, y1):
        y = py(tick)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_format_tick(tick)}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 34}" text-anchor="middle" class="axis">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" class="axis">'
        f"{escape(y_label)}</text>"
    )
    parts.append(
        f'<clipPath id="{escape(chart_id)}-clip"><rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/></clipPath>'
    )
    parts.append(f'<g clip-path="url(#{escape(chart_id)}-clip)">')
    if diagonal:
        low, high = max(x0, y0), min(x1, y1)
        parts.append(
            f'<line class="diagonal" x1="{px(low):.1f}" y1="{py(low):.1f}" x2="{px(high):.1f}" y2="{py(high):.1f}" '
            'stroke="#555555" stroke-dasharray="4 3"/>'
        )
    for s in series:
        band = [(x, lo, hi) for x, lo, hi in s.band if ok(x, lo, hi)]
        if band:
            outline = [(px(x), py(hi)) for x, _, hi in band] + [(px(x), py(lo)) for x, lo, _ in reversed(band)]
            d = "M" + " L".join(f"{a:.1f},{b:.1f}" for a, b in outline) + " Z"
            parts.append(f'<path class="band" d="{d}" fill="{s.color}" fill-opacity="0.15" stroke="none"/>')
        for x, lo, hi in s.errors:
            if ok(x, lo, hi):
                parts.append(
                    f'<line class="error-bar" x1="{px(x):.1f}" y1="{py(lo):.1f}" x2="{px(x):.1f}" y2="{py(hi):.1f}" '
                    f'stroke="{s.color}" stroke-width="1.5"/>'
                )
        drawn = [(x, y) for x, y in s.points if ok(x, y)]
        if s.line and len(drawn) > 1:
            d = "M" + " L".join(f"{px(x):.1f},{py(y):.1f}" for x, y in drawn)
            parts.append(f'<path class="line" d="{d}" fill="none" stroke="{s.color}" stroke-width="1.8"/>')
        if s.dots or (s.line and len(drawn) == 1):
            for index, (x, y) in enumerate(s.points):
                if ok(x, y):
                    marks = _attributes(s.marks[index]) if index < len(s.marks) else ""
                    parts.append(
                        f'<circle class="dot" cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{s.color}"{marks}>'
                        f"<title>{escape(s.name)}: ({_format_tick(x)}, {y:.4f})</title></circle>"
                    )
    parts.append("</g>")
    if legend_rows:
        for row, s in enumerate(series):
            y = height + 2 + 16 * row
            parts.append(f'<rect x="{left}" y="{y - 9}" width="12" height="10" fill="{s.color}"/>')
            parts.append(f'<text x="{left + 18}" y="{y}" class="legend">{escape(s.name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
