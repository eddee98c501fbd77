"""run.adaptive: --gi-samples=auto's looks in a run (fake asks, no model)."""

from __future__ import annotations

from concurrent.futures import Future

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.run.adaptive import (
    ask_adaptively,
    baseline_problem,
    design,
    sample_outcomes,
)
from pytest_graphinstruct.run.aggregate import build_cell
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    ItemResult,
    SampleResult,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import as_level

CELL = Cell("m", "zero-shot")


def sample(ok: bool) -> SampleResult:
    return SampleResult(parsed=True, refusal=False, violations=() if ok else ("num_nodes=5",))


def baseline(samples: dict[str, tuple[bool, ...]], *, errors: tuple[str, ...] = ()
             ) -> CellReport:
    items = [ItemResult(instruction_id=i, level=int(i[1]), cell=CELL.label, model="m",
                        strategy="zero-shot", outcome="error" if i in errors else (
                            "passed" if all(s) else "failed"),
                        level_score=None if i in errors else 0.5,
                        samples=tuple(sample(x) for x in s)) for i, s in samples.items()]
    return build_cell(CellMetadata("m", "zero-shot", samples_per_instruction=5), items)


def inst(iid: str) -> Instruction:
    return Instruction(id=iid, level=as_level(int(iid[1])), text=f"make graph {iid}",
                       explicit=())


class Model:
    """Answers sample ``k`` of an instruction from a script of pass outcomes (``None``: no
    answer), recording every ask."""

    def __init__(self, script: dict[str, tuple[bool | None, ...]]) -> None:
        self.script = script
        self.asked: list[tuple[str, int]] = []

    def ask(self, instruction: Instruction, cell: Cell, k: int) -> Future[Answer]:
        self.asked.append((instruction.id, k))
        fut: Future[Answer] = Future()
        ok = self.script[instruction.id][k]
        fut.set_result(Answer(error="HTTP 500") if ok is None else
                       Answer(text="pass" if ok else "fail"))
        return fut

    @staticmethod
    def passed(instruction: Instruction, cell: Cell, answer: Answer) -> bool:
        return answer.text == "pass"


def test_a_level_that_agrees_everywhere_asks_one_sample_each() -> None:
    ids = [f"L1-{k:03d}" for k in range(6)]
    model = Model({i: (True,) * 5 for i in ids})
    planned: dict[tuple[str, str], int] = {}
    looks = ask_adaptively([(inst(i), CELL) for i in ids],
                           {CELL.label: baseline({i: (True,) * 5 for i in ids})}, planned,
                           cap=5, ask=model.ask, passed=model.passed)
    assert sorted(model.asked) == [(i, 0) for i in ids]
    assert planned == {(i, CELL.label): 1 for i in ids} and looks.asked == 6
    assert looks.cells[CELL.label].levels[1].state == "not worse"


def test_an_open_level_asks_again_and_settles_what_agreed() -> None:
    ids = [f"L2-{k:03d}" for k in range(8)]
    script = {i: (True,) * 5 for i in ids}
    script[ids[0]] = (False, True, True, True, True)  # one newly failing pair: open
    model = Model(script)
    planned: dict[tuple[str, str], int] = {}
    looks = ask_adaptively([(inst(i), CELL) for i in ids],
                           {CELL.label: baseline({i: (True,) * 5 for i in ids})}, planned,
                           cap=5, ask=model.ask, passed=model.passed)
    # three looks for all, then only the instruction that differed, up to the cap
    assert planned[(ids[0], CELL.label)] == 5
    assert all(planned[(i, CELL.label)] == 3 for i in ids[1:])
    assert looks.asked == 3 * 8 + 2
    assert looks.cells[CELL.label].levels[2].state == "settled"


def test_no_answer_takes_the_instruction_out_and_unpaired_ones_get_one_sample() -> None:
    ids = [f"L2-{k:03d}" for k in range(8)]
    script: dict[str, tuple[bool | None, ...]] = {i: (True,) * 5 for i in ids}
    script[ids[0]] = (False, None, True, True, True)
    script["L2-900"] = (True,)  # not in the baseline
    model = Model(script)
    planned: dict[tuple[str, str], int] = {}
    looks = ask_adaptively([(inst(i), CELL) for i in [*ids, "L2-900"]],
                           {CELL.label: baseline({i: (True,) * 5 for i in ids})}, planned,
                           cap=5, ask=model.ask, passed=model.passed)
    assert ("L2-900", 0) in model.asked and planned[("L2-900", CELL.label)] == 1
    assert planned[(ids[0], CELL.label)] == 2  # its second sample got no answer
    # replayed without it, no pair differs: the level is decided as the gate will decide it
    assert looks.cells[CELL.label].levels[2].state == "not worse"


def test_the_design_family_counts_every_item_the_baseline_scored() -> None:
    base = baseline({"L0-000": (True,), "L1-000": (True,), "L2-000": (False,)},
                    errors=("L2-000",))
    outcomes = sample_outcomes(base)
    assert set(outcomes) == {"L0-000", "L1-000"}
    settings = design(5, {"c": {"L0-000": 0, "L1-000": 1, "L2-000": 2, "L3-000": 3}},
                      {"c": outcomes})
    assert settings.tests == 2 and settings.cap == 5


def test_a_baseline_of_several_samples_serves_auto() -> None:
    several = baseline({"L1-001": (True, False), "L1-002": (True,)})
    assert baseline_problem({CELL.label: several}, "b.json") is None
    assert baseline_problem({}, "b.json") is None  # nothing compared: nothing to say


def test_a_baseline_of_one_sample_or_none_per_instruction_is_named_with_what_it_holds() -> None:
    several = baseline({"L1-001": (True, True)})
    one = baseline({"L1-001": (True,), "L1-002": (False,), "L1-003": (True, True)},
                   errors=("L1-003",))  # an error's samples are not scored
    bare = baseline({"L1-001": ()})
    said = baseline_problem({"m-zero-shot": several, "m-few-shot": one}, "ci/base.json")
    assert said == ("--gi-samples=auto needs a baseline of several samples per instruction, "
                    "but ci/base.json holds 1 sample per instruction (cell m-few-shot): "
                    "nothing could be asked beyond the first sample; make the baseline with "
                    "a fixed --gi-samples (e.g. 5) and --gi-update-baseline, or give a fixed "
                    "count")
    assert "\n" not in said
    assert "holds no per-sample verdicts (cell m-zero-shot)" in (
        baseline_problem({"m-zero-shot": bare}, "old.json") or "")
