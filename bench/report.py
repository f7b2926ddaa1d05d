"""What a bench run found, and how it is written down: bench/REPORT.md and the stdout summary."""

from __future__ import annotations

import math
import os
import platform
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path


@dataclass
class Figure:
    """One measured figure next to its floor and the target the issue sets for it."""

    name: str
    value: float | None
    unit: str
    floor: float | None = None
    floor_name: str = ""
    target: str = ""
    passed: bool | None = None  # None: not measured, or a figure without a target
    ratio: float | None = None
    informational: bool = False  # reported for what it is, with no target to pass or fail
    notes: list[str] = field(default_factory=list)

    def value_text(self) -> str:
        return "not available" if self.value is None else f"{self.value:,.1f} {self.unit}"

    def floor_text(self) -> str:
        return "-" if self.floor is None else f"{self.floor:,.1f} {self.unit}"

    def ratio_text(self) -> str:
        return "-" if self.ratio is None else f"{self.ratio:.2f}"

    def verdict_text(self) -> str:
        if self.informational and self.value is not None:
            return "reported"
        return {True: "PASS", False: "FAIL", None: "not measured"}[self.passed]

    @property
    def missed(self) -> bool:
        """A figure with a target that was not met (or could not be measured)."""
        return not self.informational and not self.passed


@dataclass
class Run:
    started_at: datetime
    command: str
    parameters: dict[str, object]
    machine: dict[str, str]
    figures: list[Figure] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)  # (title, markdown) after the notes
    seconds: float = 0.0


def percentile(samples: list[float], pct: float) -> float:
    """Nearest-rank percentile: the value at or below which `pct` percent of samples fall."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def summary_ms(samples: list[float]) -> str:
    return (
        f"n={len(samples)}, p50 {percentile(samples, 50):.1f} ms, p95 {percentile(samples, 95):.1f} ms, "
        f"mean {statistics.fmean(samples):.1f} ms, max {max(samples):.1f} ms"
    )


def machine_info(*, postgres_version: str, redis_version: str) -> dict[str, str]:
    cpu_model = "unknown"
    memory = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:  # not Linux: the report says unknown rather than failing the run
        pass
    return {
        "CPUs (nproc)": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "CPU model": cpu_model,
        "memory": memory,
        "OS": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
        "PostgreSQL": postgres_version,
        "Redis": redis_version,
        # The bench shares the machine with whatever else runs; a high load makes every figure worse.
        "load average at start (1, 5, 15 min)": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def render(run: Run) -> str:
    lines = [
        "# Factdesk benchmark report",
        "",
        "Written by `make bench` (bench/__main__.py); each run overwrites it.",
        "",
        f"- date: {run.started_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC",
        f"- command: `{run.command}`",
        f"- duration of the whole run: {run.seconds:,.0f} s",
        "- parameters: " + ", ".join(f"{k}={v}" for k, v in run.parameters.items()),
        "",
        "## Machine",
        "",
        *[f"- {k}: {v}" for k, v in run.machine.items()],
        "",
        "## Figures",
        "",
        "Ratio = measured / floor: for rates (posts/s, claims/s, decisions/s) higher is better, for latencies (ms) "
        "lower is better. A figure the issue gives no target is `reported`, not passed or failed.",
        "",
        "| figure | measured | floor | ratio | target | result |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in run.figures:
        floor = f"{f.floor_text()} ({f.floor_name})" if f.floor_name else f.floor_text()
        lines.append(f"| {f.name} | {f.value_text()} | {floor} | {f.ratio_text()} | {f.target} | {f.verdict_text()} |")
    lines += ["", "## Notes per figure", ""]
    for f in run.figures:
        if f.notes:
            lines.append(f"### {f.name}")
            lines.append("")
            lines += [f"- {note}" for note in f.notes]
            lines.append("")
    for title, body in run.sections:
        lines += [f"## {title}", "", body, ""]
    if run.details:
        lines += ["## How it was measured", "", *[f"- {d}" for d in run.details], ""]
    return "\n".join(lines).rstrip() + "\n"


def summary(run: Run) -> str:
    width = max(len(f.name) for f in run.figures) if run.figures else 10
    out = [f"Factdesk bench ({run.seconds:,.0f} s)"]
    for f in run.figures:
        out.append(
            f"  {f.name:<{width}}  {f.value_text():>22}  floor {f.floor_text():>22}  ratio {f.ratio_text():>6}"
            f"  {f.verdict_text():<12} ({f.target})"
        )
    return "\n".join(out)
