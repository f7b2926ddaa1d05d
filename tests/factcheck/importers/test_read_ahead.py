"""The importer reads ahead in a second thread: records keep their order, a reader's error reaches
the import where it happened, and an import that stops early leaves no reading thread behind."""

from __future__ import annotations

import threading

import pytest

from factcheck.importing.runner import read_ahead


def test_records_come_in_order_across_chunks():
    assert list(read_ahead(iter(range(2_345)), chunk=100, depth=2)) == list(range(2_345))
    assert list(read_ahead(iter([]))) == []


def test_an_error_in_the_reader_is_raised_after_the_records_before_it():
    def records():
        yield from range(250)
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    seen = []
    with pytest.raises(UnicodeDecodeError):
        for record in read_ahead(records(), chunk=100, depth=2):
            seen.append(record)
    assert seen == list(range(200))  # whole chunks before the failing one; the import counts only committed batches


def test_stopping_early_ends_the_reading_thread():
    endless = iter(int, 1)  # never ends
    reader = read_ahead(endless, chunk=10, depth=2)
    assert next(reader) == 0
    reader.close()
    assert not any(t.name == "import-reader" and t.is_alive() for t in threading.enumerate())
