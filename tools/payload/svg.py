"""The cumulative-replay chart as a self-contained SVG.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final
from xml.sax.saxutils import escape

from payload_corpus import StoredForm

from payload.forms import TITLES
from payload.reading import FORMS
from payload.report import Report

STYLES: Final = {  # Okabe-Ito colours; raw is drawn thin and dashed over the canonical line it hugs
    StoredForm.CANONICAL: ("#0072B2", ' stroke-width="3.6"'),
    StoredForm.RAW: ("#CC79A7", ' stroke-width="1.8" stroke-dasharray="6 4"'),
    StoredForm.LEGACY: ("#D55E00", ' stroke-width="2.4"'),
}
WIDTH: Final = 880
HEIGHT: Final = 520
LEFT, RIGHT, TOP, BOTTOM = 92, 848, 84, 452
FONT: Final = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


def nice_step(span: float, target: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 × 10^k) giving about ``target`` ticks over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / target
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def byte_unit(value: float) -> tuple[str, float]:
    for name, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return name, size
    return "bytes", 1.0


def tick_label(value: float) -> str:
    """A tick value with thousands separators and no trailing zeros: 1,000, 2.5, 0.25."""
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0")


def render_svg(curves: Mapping[StoredForm, Sequence[int]], title: str, subtitle: str) -> str:
    """A line chart of cumulative replay bytes per turn, one line per form, as SVG text."""
    turns = max((len(c) for c in curves.values()), default=0)
    top_value = max((c[-1] for c in curves.values() if c), default=0)
    unit, scale = byte_unit(top_value)
    y_step = nice_step(top_value / scale, target=6)
    y_max = max(y_step, math.ceil(top_value / scale / y_step) * y_step)
    x_step = max(1.0, nice_step(turns, target=8))
    x_max = max(x_step, math.ceil(turns / x_step) * x_step)

    def x(turn: float) -> float:
        return LEFT + (RIGHT - LEFT) * turn / x_max

    def y(value: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * value / scale / y_max

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}"'
        f' viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img">',
        f"<title>{escape(title)}</title>",
        f"<desc>{escape(subtitle)}</desc>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="34" font-size="19" font-weight="600" fill="#222">'
        f"{escape(title)}</text>",
        f'<text x="{LEFT}" y="58" font-size="13" fill="#555">{escape(subtitle)}</text>',
        '<g class="grid" stroke="#e4e4e4" stroke-width="1">',
    ]
    y_ticks = [i * y_step for i in range(round(y_max / y_step) + 1)]
    x_ticks = [i * x_step for i in range(round(x_max / x_step) + 1)]
    out += [
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{y(v * scale):.1f}" y2="{y(v * scale):.1f}"/>'
        for v in y_ticks[1:]
    ]
    out += [
        "</g>",
        '<g class="axes" stroke="#333" stroke-width="1.2">',
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{BOTTOM}" y2="{BOTTOM}"/>',
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{BOTTOM}"/>',
    ]
    out += [
        f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{BOTTOM}" y2="{BOTTOM + 5}"/>' for t in x_ticks
    ]
    out += [
        f'<line x1="{LEFT - 5}" x2="{LEFT}" y1="{y(v * scale):.1f}" y2="{y(v * scale):.1f}"/>'
        for v in y_ticks
    ]
    out += ["</g>", '<g class="tick-labels" font-size="12" fill="#444">']
    out += [
        f'<text x="{x(t):.1f}" y="{BOTTOM + 21}" text-anchor="middle">{tick_label(t)}</text>'
        for t in x_ticks
    ]
    out += [
        f'<text x="{LEFT - 9}" y="{y(v * scale) + 4:.1f}" text-anchor="end">{tick_label(v)}</text>'
        for v in y_ticks
    ]
    out += [
        "</g>",
        f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="{BOTTOM + 48}" font-size="13" fill="#333"'
        ' text-anchor="middle">turn within a task (one provider request per assistant message)'
        "</text>",
        f'<text transform="translate(26 {(TOP + BOTTOM) / 2:.0f}) rotate(-90)" font-size="13"'
        f' fill="#333" text-anchor="middle">cumulative replay bytes, all tasks ({unit})</text>',
    ]
    for form in (StoredForm.CANONICAL, StoredForm.RAW, StoredForm.LEGACY):
        colour, style = STYLES[form]
        points = " ".join(f"{x(i + 1):.1f},{y(v):.1f}" for i, v in enumerate(curves[form]))
        out.append(
            f'<polyline class="series" data-series="{form.value}" fill="none" stroke="{colour}"'
            f' stroke-linejoin="round"{style} points="{points}"/>'
        )
    ordered = sorted(FORMS, key=lambda f: -(curves[f][-1] if curves[f] else 0))
    legend_x, legend_y = LEFT + 18, TOP + 14
    out += [
        '<g class="legend" font-size="13" fill="#222">',
        f'<rect x="{legend_x - 10}" y="{legend_y - 4}" width="330"'
        f' height="{22 * len(ordered) + 10}" fill="#ffffff" fill-opacity="0.92" stroke="#cccccc"'
        ' rx="4"/>',
    ]
    for row, form in enumerate(ordered):
        colour, style = STYLES[form]
        line_y = legend_y + 12 + 22 * row
        final = curves[form][-1] if curves[form] else 0
        out += [
            f'<line x1="{legend_x}" x2="{legend_x + 30}" y1="{line_y}" y2="{line_y}"'
            f' stroke="{colour}"{style}/>',
            f'<text x="{legend_x + 40}" y="{line_y + 4}">{escape(TITLES[form])}:'
            f" {final / scale:,.3f} {unit}</text>",
        ]
    out += ["</g>", "</svg>", ""]
    return "\n".join(out)


def chart_titles(report: Report) -> tuple[str, str]:
    return (
        f"Cumulative reasoning replay per turn, {report.facts.files:,} tasks",
        "Sum over tasks; each turn's request replays every earlier reasoning item"
        " (HTTP body bytes)",
    )
