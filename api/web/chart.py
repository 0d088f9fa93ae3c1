"""A horizontal bar chart laid out on the server, drawn by the template as inline SVG.

Pure geometry: no Flask, no database.  Bars are scaled to the largest value, so the longest bar
spans the plot and the others are in proportion; a zero value has no bar at all.
"""

from __future__ import annotations

from dataclasses import dataclass

#: SVG user units; the <svg> scales to its container through its viewBox
WIDTH = 640
LABEL_WIDTH = 110
VALUE_WIDTH = 130
BAR_HEIGHT = 28
GAP = 12
PLOT_WIDTH = WIDTH - LABEL_WIDTH - VALUE_WIDTH


@dataclass(frozen=True)
class Bar:
    """One bar: its label, value, and where the template draws it."""

    key: str
    label: str
    value: int
    y: int
    width: float

    @property
    def text_y(self) -> float:
        """The baseline of the bar's label and value, centred on the bar."""
        return self.y + BAR_HEIGHT / 2 + 5

    @property
    def value_x(self) -> float:
        return LABEL_WIDTH + self.width + 8


@dataclass(frozen=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    label_width: int
    bar_height: int


def bar_chart(values: list[tuple[str, str, int]]) -> BarChart:
    """Lay out ``(key, label, value)`` bars top to bottom in the order given."""
    top = max((value for _key, _label, value in values), default=0)
    bars = [
        Bar(
            key=key,
            label=label,
            value=value,
            y=GAP + index * (BAR_HEIGHT + GAP),
            width=round(PLOT_WIDTH * value / top, 2) if top > 0 else 0.0,
        )
        for index, (key, label, value) in enumerate(values)
    ]
    height = GAP + len(bars) * (BAR_HEIGHT + GAP)
    return BarChart(bars, WIDTH, height, LABEL_WIDTH, BAR_HEIGHT)
