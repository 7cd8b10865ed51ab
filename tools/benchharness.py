"""The one timing loop every benchmark in ``tools/`` uses.

On a shared machine one method's time says little: another process may have run beside it. So
the compared methods run interleaved in one process, one trial of each per round (A B C, A B C,
…), and what a bench reports is the spread of each method's times and of each ratio *computed
within a round*, which drift on the machine hits on both sides alike::

    rounds = run_rounds({"a": timed(a), "b": timed(b)}, rounds=5)
    print("\\n".join(format_rounds(rounds, {"b_over_a": ("b", "a")})))
    document = rounds.to_json({"b_over_a": ("b", "a")})  # for tools that render tables

A method is a :data:`Trial`: a callable that runs once and returns the seconds it took, so a
trial timed elsewhere (a child process's own clock, a runner's report) fits as well as
:func:`timed`'s ``perf_counter`` around a call. The machine's load average is read before the
first round and after the last, with the number of usable CPUs, and printed with the figures.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

Trial = Callable[[], float]
"""One run of a method; returns the seconds it took."""

Ratios = Mapping[str, tuple[str, str]]
"""Ratio name -> (numerator method, denominator method), each taken within a round."""


def timed(run: Callable[[], object], *, collect: bool = True) -> Trial:
    """A trial timing ``run()`` with ``perf_counter``, after a ``gc.collect()`` unless told not to
    (so garbage from the previous trial is not collected on this one's clock)."""

    def trial() -> float:
        if collect:
            gc.collect()
        started = time.perf_counter()
        run()
        return time.perf_counter() - started

    return trial


@contextmanager
def frozen_gc() -> Iterator[None]:
    """Hold what exists now (the long-lived inputs) out of the collector's scans meanwhile."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True, slots=True)
class Spread:
    """The minimum, median and maximum of a set of figures."""

    min: float
    median: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("a spread needs at least one value")
        return cls(min(values), statistics.median(values), max(values))

    def scaled(self, factor: float) -> Spread:
        return Spread(self.min * factor, self.median * factor, self.max * factor)

    def to_json(self) -> dict[str, float]:
        return {"min": self.min, "median": self.median, "max": self.max}

    def format(self, spec: str = ".3g", unit: str = "") -> str:
        """``median (min–max)unit``."""
        return (
            f"{self.median:{spec}}{unit} ({self.min:{spec}}–{self.max:{spec}}{unit})"
            if self.min != self.max
            else f"{self.median:{spec}}{unit}"
        )


@dataclass(frozen=True, slots=True)
class Machine:
    """Where the figures were taken, and how busy the machine was."""

    python: str
    platform: str
    cpus: int
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]

    def describe(self) -> str:
        def load(values: tuple[float, float, float]) -> str:
            return "/".join(f"{v:.2f}" for v in values)

        return (
            f"python {self.python}, {self.cpus} CPUs usable; load average (1/5/15 min) "
            f"{load(self.load_start)} at start, {load(self.load_end)} at end"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "platform": self.platform,
            "cpus": self.cpus,
            "load_average_start": [round(v, 2) for v in self.load_start],
            "load_average_end": [round(v, 2) for v in self.load_end],
        }


def usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class Rounds:
    """Every trial's seconds, by method, in round order, and the machine they ran on."""

    times: Mapping[str, tuple[float, ...]]
    machine: Machine

    @property
    def count(self) -> int:
        return min((len(values) for values in self.times.values()), default=0)

    def spread(self, method: str) -> Spread:
        return Spread.of(self.times[method])

    def per_round_ratios(self, numerator: str, denominator: str) -> tuple[float, ...]:
        return tuple(
            a / b
            for a, b in zip(self.times[numerator], self.times[denominator], strict=True)
            if b > 0
        )

    def ratio(self, numerator: str, denominator: str) -> Spread:
        """The spread of ``t(numerator) / t(denominator)`` over the rounds, each within one."""
        return Spread.of(self.per_round_ratios(numerator, denominator))

    def to_json(self, ratios: Ratios = {}) -> dict[str, Any]:  # noqa: B006 - read only
        return {
            "rounds": self.count,
            "machine": self.machine.to_json(),
            "seconds": {name: self.spread(name).to_json() for name in self.times},
            "trials": {name: list(values) for name, values in self.times.items()},
            "ratios": {
                name: {
                    "numerator": a,
                    "denominator": b,
                    **self.ratio(a, b).to_json(),
                    "rounds": list(self.per_round_ratios(a, b)),
                }
                for name, (a, b) in ratios.items()
            },
        }


def run_rounds(
    methods: Mapping[str, Trial],
    rounds: int,
    *,
    progress: Callable[[str], None] | None = None,
) -> Rounds:
    """``rounds`` rounds of one trial of each method, in the order given."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for number in range(1, rounds + 1):
        for name, trial in methods.items():
            if progress is not None:
                progress(f"round {number}/{rounds}: {name}")
            times[name].append(trial())
    machine = Machine(
        python=platform.python_version(),
        platform=platform.platform(),
        cpus=usable_cpus(),
        load_start=load_start,
        load_end=os.getloadavg(),
    )
    return Rounds({name: tuple(values) for name, values in times.items()}, machine)


def format_rounds(rounds: Rounds, ratios: Ratios = {}, *, unit: str = "ms") -> list[str]:  # noqa: B006
    """The report's lines: each method's and each ratio's min / median / max, and the load."""
    scale = {"s": 1.0, "ms": 1e3, "µs": 1e6}[unit]
    width = max((len(name) for name in (*rounds.times, *ratios)), default=6)
    lines = [
        f"{rounds.count} interleaved rounds; {rounds.machine.describe()}",
        f"{'':{width}}  {'min':>10} {'median':>10} {'max':>10}",
    ]
    for name in rounds.times:
        s = rounds.spread(name).scaled(scale)
        lines.append(f"{name:{width}}  {s.min:>10.3f} {s.median:>10.3f} {s.max:>10.3f}  {unit}")
    for name, (a, b) in ratios.items():
        r = rounds.ratio(a, b)
        lines.append(f"{name:{width}}  {r.min:>10.3f} {r.median:>10.3f} {r.max:>10.3f}  ×")
    return lines
