"""The live progress line's text: rates, ETA and width from counts and a fake clock; a batch
run's batch states, escaped and bounded."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.report.live.progress import (
    MAX_STATE_CHARS,
    MIN_RATE_SPAN_S,
    ProgressMeter,
    ProgressView,
    batch_text,
    format_count,
    format_duration,
    progress_line,
)
from pytest_graphinstruct.run.tally import BatchProgress, ProgressCounts


def counts(requested: int = 100, received: int = 0, cached: int = 0, errors: int = 0,
           tokens: int = 0) -> ProgressCounts:
    return ProgressCounts(requested, received, cached, errors, tokens)


def test_no_rate_before_the_window_spans_a_second() -> None:
    meter = ProgressMeter(0.0)
    meter.observe(0.0, counts(received=0), 0, 100)
    view = meter.observe(MIN_RATE_SPAN_S / 2, counts(received=10), 5, 100)
    assert view.answer_rate is None and view.item_rate is None and view.eta_s is None
    assert "? answers/s" in progress_line(view, 200) and "ETA ?" in progress_line(view, 200)


def test_rates_and_eta_from_counts_and_the_clock() -> None:
    meter = ProgressMeter(100.0)
    meter.observe(100.0, counts(received=0), 0, 100)
    view = meter.observe(110.0, counts(received=20), 10, 100)
    assert view.answer_rate == pytest.approx(2.0)  # 20 answers in 10 s
    assert view.item_rate == pytest.approx(1.0)
    # 80 answers at 2/s = 40 s; 90 items at 1/s = 90 s: the longer one
    assert view.eta_s == pytest.approx(90.0)
    assert view.elapsed_s == pytest.approx(10.0)
    line = progress_line(view, 200)
    assert "answers 20/100" in line and "items 10/100" in line
    assert "2.0 answers/s" in line and "ETA 1m30s" in line and "10s elapsed" in line


def test_cache_hits_do_not_count_towards_the_answer_rate() -> None:
    meter = ProgressMeter(0.0)
    meter.observe(0.0, counts(received=60, cached=60), 0, 100)  # hits arrive at once
    view = meter.observe(10.0, counts(received=70, cached=60), 0, 100)
    assert view.answer_rate == pytest.approx(1.0)  # 10 fresh answers in 10 s
    # 30 answers still to come at 1/s; the items, which wait for them, have no rate yet
    assert view.eta_s == pytest.approx(30.0)
    assert "(60 cached)" in progress_line(view, 200)


def test_the_rate_window_slides() -> None:
    meter = ProgressMeter(0.0, window_s=10.0)
    for t in range(0, 11):  # 5 answers/s for 10 s
        meter.observe(float(t), counts(requested=1000, received=5 * t), t, 1000)
    for t in range(11, 31):  # then 1 answer/s
        view = meter.observe(float(t), counts(requested=1000, received=50 + (t - 10)), t, 1000)
    assert view.answer_rate == pytest.approx(1.0)  # the first 10 s left the window


def test_stalled_run_has_zero_rate_and_no_eta() -> None:
    meter = ProgressMeter(0.0)
    meter.observe(0.0, counts(received=10), 3, 100)
    view = meter.observe(30.0, counts(received=10), 3, 100)
    assert view.answer_rate == 0.0 and view.eta_s is None


def test_eta_once_every_answer_is_in_follows_the_items() -> None:
    meter = ProgressMeter(0.0)
    meter.observe(0.0, counts(received=100), 50, 100)
    view = meter.observe(5.0, counts(received=100), 60, 100)
    assert view.eta_s == pytest.approx(20.0)  # 40 items at 2/s
    assert "2.0 items/s" in progress_line(view, 200)
    done = meter.observe(10.0, counts(received=100), 100, 100)
    assert done.eta_s == 0.0


def test_unknown_selection_has_no_eta() -> None:
    meter = ProgressMeter(0.0)
    meter.observe(0.0, counts(received=0), 0, None)
    view = meter.observe(10.0, counts(received=10), 5, None)
    assert view.eta_s is None and "items 5/?" in progress_line(view, 200)


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (0.2, "1s"), (59.5, "1m00s"), (125, "2m05s"), (3600, "1h00m"), (7384, "2h03m"),
])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(("n", "text"), [
    (0, "0"), (9999, "9999"), (12345, "12.3k"), (999_499, "999k"), (1_234_567, "1.23M"),
    (5_000_000_000, "5G"),
])
def test_format_count(n: int, text: str) -> None:
    assert format_count(n) == text


def test_errors_and_tokens_are_shown() -> None:
    view = ProgressView(counts(received=5, errors=1, tokens=123_456), 4, 10, 3.0, 1.0, 1.0,
                        5.0)
    line = progress_line(view, 200)
    assert "1 error " in line + " " and "tokens 123k" in line


def test_narrow_terminals_drop_the_least_important_fields_first() -> None:
    view = ProgressView(counts(received=5, cached=2, errors=3, tokens=10_000), 4, 10, 75.0,
                        1.5, 1.0, 5.0)
    wide = progress_line(view, 300)
    assert "elapsed" in wide
    narrow = progress_line(view, len(wide) - 5)  # one field too many
    assert "elapsed" not in narrow and "answers/s" in narrow
    tight = progress_line(view, 80)
    assert "answers 5/100" in tight and "items 4/10" in tight and len(tight) < 80


@given(requested=st.integers(0, 10**7), received=st.integers(0, 10**7),
       errors=st.integers(0, 10**7), tokens=st.integers(0, 10**13),
       done=st.integers(0, 10**6), selected=st.one_of(st.none(), st.integers(0, 10**6)),
       elapsed=st.floats(0, 10**7), rate=st.one_of(st.none(), st.floats(0, 10**6)),
       eta=st.one_of(st.none(), st.floats(0, 10**8)), width=st.integers(1, 400),
       batches=st.lists(st.builds(BatchProgress, st.text(max_size=60), st.integers(-5, 10**9),
                                  st.integers(-5, 10**9), st.text(max_size=200),
                                  st.integers(-(10**9), 10**12), st.integers(-5, 10**12),
                                  st.integers(-5, 10**12)), max_size=3))
def test_the_line_is_bounded_and_plain(requested: int, received: int, errors: int, tokens: int,
                                       done: int, selected: int | None, elapsed: float,
                                       rate: float | None, eta: float | None,
                                       width: int, batches: list[BatchProgress]) -> None:
    view = ProgressView(ProgressCounts(requested, received, received // 2, errors, tokens),
                        done, selected, elapsed, rate, rate, eta, tuple(batches))
    line = progress_line(view, width)
    assert len(line) < max(2, width)
    assert re.fullmatch(r"[ -~]*", line)  # printable ASCII: no escape or control characters


def view_with(*batches: BatchProgress) -> ProgressView:
    return ProgressView(counts(received=0), 0, 500, 10.0, None, None, None, batches)


def test_a_batch_runs_line_says_where_its_batch_stands() -> None:
    meter = ProgressMeter(0.0)
    batch = BatchProgress("gpt-x", 2, 3, "in_progress", 340, 0, 500)
    view = meter.observe(1.0, counts(), 0, 500, [batch])
    assert view.batches == (batch,)
    line = progress_line(view, 200)
    assert "answers 0/100 | items 0/500 | batch 2/3 in_progress 340/500 |" in line
    failed = BatchProgress("gpt-x", 1, 1, "finalizing", 480, 20, 500)
    assert batch_text(failed) == "batch 1/1 finalizing 480/500, 20 failed"
    two = progress_line(view_with(batch, BatchProgress("m2", 1, 1, "validating", 0, 0, 12_345)),
                        300)
    assert "gpt-x batch 2/3 in_progress 340/500 | m2 batch 1/1 validating 0/12.3k" in two
    assert "batch" not in progress_line(view_with(), 300)  # not a batch run


def test_batch_states_are_kept_as_long_as_the_answers_on_a_narrow_terminal() -> None:
    view = ProgressView(counts(received=5, tokens=10_000), 4, 10, 75.0, 1.5, 1.0, 5.0,
                        (BatchProgress("m", 1, 1, "in_progress", 5, 0, 100),))
    tight = progress_line(view, 80)
    assert tight == "GraphInstruct: answers 5/100 | items 4/10 | batch 1/1 in_progress 5/100"


@pytest.mark.parametrize("state", ["\x1b[2J\x1b[31mcompleted\x07", "in\nprogress\r\t x",
                                   "\u202edetaerc", "完成" * 20, "x" * 500])
def test_a_hostile_batch_state_is_escaped_and_bounded(state: str) -> None:
    text = batch_text(BatchProgress("m\x1b[2J", 1, 1, state, -3, 0, 10**15))
    assert re.fullmatch(r"[ -~]*", text)  # printable ASCII: nothing acts on the terminal
    shown = text.split(" ", 2)[2].rsplit(" ", 1)[0]
    assert len(shown) <= MAX_STATE_CHARS and "\x1b" not in text.replace("\\x1b", "")
    assert text.endswith(" 0/1000000G")
    assert batch_text(BatchProgress("m\x1b[2J", 1, 1, "ok", 0, 0, 1), named=True).startswith(
        "m\\x1b[2J batch")
