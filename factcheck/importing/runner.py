"""Running an import: check the whole file, then write its records in batches, and count.

Two passes over the file. The first reads it all cheaply (UTF-8, the CSV's structure and header,
the ClaimReview document's JSON) and raises FileProblem before anything is written. The second
streams the records and writes them `batch_size` at a time, each batch in one transaction: the
flags through factcheck.ingest.ingest_flags (as the API does; the audit log says `system:import`),
then each rated post's rating through factcheck.ratings.record_rating. Only one batch is in
memory; rejections are kept up to SHOWN and, past that, all go to `<input>.rejections.csv`.

A record counts as imported when something of it was written (its flag, or its rating), as
already present when all of it was there before, and as rejected with its line (or item) and the
reason. A rated post whose rating is refused keeps its flag: the claim is still flagged for review.
"""

from __future__ import annotations

import csv
import io
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import BinaryIO, TextIO

from django.db import DatabaseError, transaction
from django.utils import timezone
from tqdm import tqdm

from factcheck.importing import claimreview, csv_reader, jsonl, liar
from factcheck.importing.rated import Outcome, Reviewers, as_stored, record_imported_rating
from factcheck.importing.records import FileProblem, RatedPost
from factcheck.ingest import FlagInput, IdempotencyConflict, ingest_flags
from factcheck.models import Post

READERS: dict[str, ModuleType] = {"csv": csv_reader, "jsonl": jsonl, "claimreview": claimreview, "liar": liar}
FORMATS = tuple(READERS)
DEFAULT_BATCH = 1000
MAX_BATCH = 10_000
SHOWN = 20  # rejections printed (and kept in memory); more go to the rejections file


@dataclass
class Rejection:
    where: int
    reason: str


@dataclass
class ImportSummary:
    unit: str
    imported: int = 0
    already_present: int = 0
    rejected: int = 0
    shown: list[Rejection] = field(default_factory=list)
    rejections_file: Path | None = None

    def lines(self) -> list[str]:
        out = [f"imported {self.imported}, already present {self.already_present}, rejected {self.rejected}"]
        out += [f"{self.unit} {r.where}: {r.reason}" for r in self.shown]
        if self.rejections_file is not None:
            out.append(f"all {self.rejected} rejections ({self.unit}, reason): {self.rejections_file}")
        return out


class _Rejections:
    """Keeps the first SHOWN; from the one after, writes every rejection to the file beside the input."""

    def __init__(self, *, path: Path, summary: ImportSummary) -> None:
        self.file_path = path.with_name(path.name + ".rejections.csv")
        self.summary = summary
        self.file: TextIO | None = None
        self.writer = None

    def add(self, where: int, reason: str) -> None:
        self.summary.rejected += 1
        if len(self.summary.shown) < SHOWN:
            self.summary.shown.append(Rejection(where, reason))
            return
        if self.writer is None:
            self.file = self._open()
            self.writer = csv.writer(self.file)
            self.writer.writerow([self.summary.unit, "reason"])
            self.writer.writerows([r.where, r.reason] for r in self.summary.shown)
            self.summary.rejections_file = self.file_path
        self.writer.writerow([where, reason])

    def _open(self) -> TextIO:
        """The file beside the input, or one in the temporary directory when that cannot be written (a read-only
        mount, /dev/stdin): an import stopped there at its 21st rejection, with none of the rest imported."""
        try:
            return self.file_path.open("w", newline="", encoding="utf-8")
        except OSError:
            # A short name of its own: the input's name may be what was too long.
            file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by close(), after the import
                "w", newline="", encoding="utf-8", delete=False, prefix="factdesk-rejections-", suffix=".csv"
            )
            self.file_path = Path(file.name)
            return file

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class _Counting(io.RawIOBase):
    """The file, telling the progress bar how many bytes were read (so it moves while streaming)."""

    def __init__(self, raw: BinaryIO, bar: tqdm) -> None:
        self.raw, self.bar = raw, bar

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self.bar.update(n)
        return n


def _open(path: Path, *, bar: tqdm) -> BinaryIO:
    return io.BufferedReader(_Counting(path.open("rb", buffering=0), bar), buffer_size=1 << 16)


def _bar(path: Path, *, desc: str, progress: bool) -> tqdm:
    return tqdm(total=path.stat().st_size, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, disable=not progress, leave=False, mininterval=0.5)


def import_file(
    *, path: Path, format: str, batch_size: int = DEFAULT_BATCH, progress: bool = True, now: datetime | None = None
) -> ImportSummary:
    """Import the file; raises FileProblem (nothing written) when it cannot be read as `format`."""
    reader = READERS[format]
    if not 1 <= batch_size <= MAX_BATCH:
        raise FileProblem(f"--batch-size must be between 1 and {MAX_BATCH:,}")
    if path.is_dir():
        raise FileProblem(f"{path} is a directory; give the file to import")
    if not path.is_file():
        raise FileProblem(f"{path}: no such file")
    now = now or timezone.now()
    try:
        with _bar(path, desc=f"checking {path.name}", progress=progress) as bar, _open(path, bar=bar) as stream:
            reader.check(stream)
    except OSError as exc:
        raise FileProblem(f"{path}: cannot be read ({exc.strerror or exc})") from None
    summary = ImportSummary(unit=reader.UNIT)
    rejections = _Rejections(path=path, summary=summary)
    writer = _Writer(summary=summary, rejections=rejections)
    try:
        with _bar(path, desc=f"importing {path.name}", progress=progress) as bar, _open(path, bar=bar) as stream:
            batch: list[tuple[int, FlagInput | RatedPost]] = []
            for where, item in reader.read(stream, now=now):
                if isinstance(item, str):
                    rejections.add(where, item)
                    continue
                batch.append((where, item))
                if len(batch) >= batch_size:
                    writer.write(batch, now=now)
                    batch = []
            if batch:
                writer.write(batch, now=now)
    finally:
        rejections.close()
    return summary


@dataclass
class _Tally:
    imported: int = 0
    already_present: int = 0
    rejections: list[Rejection] = field(default_factory=list)


class _Writer:
    """Writes batches; counts a batch only once it has committed."""

    def __init__(self, *, summary: ImportSummary, rejections: _Rejections) -> None:
        self.summary, self.rejections = summary, rejections
        self.reviewers = Reviewers()

    def write(self, batch: list[tuple[int, FlagInput | RatedPost]], *, now: datetime) -> None:
        try:
            self._count(self._write(batch, now=now))
        except (DatabaseError, IdempotencyConflict):
            self.reviewers.forget()  # accounts created in the rolled-back batch are gone with it
            # Validation let through something the database (or a key already used) refuses: find it, one
            # record at a time.
            for record in batch:
                try:
                    self._count(self._write([record], now=now))
                except IdempotencyConflict:
                    self.reviewers.forget()
                    if isinstance(record[1], RatedPost):
                        self._count(self._rate_imported_post(record))
                    else:
                        self.rejections.add(record[0], "idempotency_key: already names another flag")
                except DatabaseError as exc:
                    self.reviewers.forget()
                    self.rejections.add(record[0], f"could not be stored: {str(exc).strip().splitlines()[0]}")

    def _count(self, tally: _Tally) -> None:
        self.summary.imported += tally.imported
        self.summary.already_present += tally.already_present
        for rejection in tally.rejections:
            self.rejections.add(rejection.where, rejection.reason)

    @transaction.atomic(durable=True)
    def _rate_imported_post(self, record: tuple[int, RatedPost]) -> _Tally:
        """A review imported before whose post details the publisher has since edited (its date, the claimant's
        name): its flag's key, derived from the review's URL and claim, names the earlier flag, so the flag is
        not stored again; the post it made keeps the details it has, and a new verdict re-rates it, as importing
        the same review with only its verdict changed does."""
        tally, (where, item) = _Tally(), record
        post_id = Post.objects.filter(external_id=item.flag.post.external_id).values_list("id", flat=True).first()
        if post_id is None:
            tally.rejections.append(Rejection(where, "idempotency_key: already names another flag"))
            return tally
        outcome = record_imported_rating(rating=item.rating, post_id=post_id, reviewers=self.reviewers)
        if isinstance(outcome, str):
            tally.rejections.append(Rejection(where, outcome))
        elif outcome is Outcome.NEW:
            tally.imported += 1
        else:
            tally.already_present += 1
        return tally

    @transaction.atomic(durable=True)
    def _write(self, batch: list[tuple[int, FlagInput | RatedPost]], *, now: datetime) -> _Tally:
        tally = _Tally()
        rated_flags = iter(as_stored([item.flag for _, item in batch if isinstance(item, RatedPost)]))
        flags = [next(rated_flags) if isinstance(item, RatedPost) else item for _, item in batch]
        results = ingest_flags(flags=flags, now=now, system="import")
        rated = []
        for (where, item), result in zip(batch, results, strict=True):
            if isinstance(item, RatedPost):
                rated.append((where, item, result))
            elif result.duplicate:
                tally.already_present += 1
            else:
                tally.imported += 1
        if not rated:
            return tally
        post_ids = dict(
            Post.objects.filter(external_id__in_array=[r.flag.post.external_id for _, r, _ in rated])
            .values_list("external_id", "id")
        )
        for where, item, result in rated:
            outcome = record_imported_rating(
                rating=item.rating, post_id=post_ids[item.flag.post.external_id], reviewers=self.reviewers
            )
            if isinstance(outcome, str):
                tally.rejections.append(Rejection(where, outcome))
            elif outcome is Outcome.NEW or not result.duplicate:
                tally.imported += 1
            else:
                tally.already_present += 1
        return tally
