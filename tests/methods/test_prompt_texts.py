"""Pins the method prompt texts (VGIG's feedback at every granularity, the refinement turn,
CAAP's extras) for fixed instructions and answers: a change to any of them, in code or in
``prompts/templates/``, must change this test on purpose."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_graphinstruct.methods.caap import checklist, domain_prior, formulas
from pytest_graphinstruct.methods.feedback import feedback
from pytest_graphinstruct.methods.iterative import refinement_messages
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[2]
WRONG = ("Graph[name='y', nodes=6] { node_list = ['a','b','c','d','e','f']; "
         "edge_list = [('a','b'),('b','c'),('c','a'),('d','e')]; }")


def _texts() -> dict[str, str]:
    suite = {i.id: i for i in load_suite(ROOT / "instructions", levels=[2, 3, 4, 5])}
    by_level = {lvl: next(i for i in suite.values() if i.level == lvl and i.explicit)
                for lvl in (2, 3, 4, 5)}
    verifier = Verifier()
    out: dict[str, str] = {}
    for lvl, inst in by_level.items():
        v = verifier.verify(inst, WRONG)
        for level in ("none", "coarse", "fine"):
            out[f"L{lvl}/{level}"] = feedback(v, level, instruction=inst)
        out[f"L{lvl}/checklist"] = checklist(inst)
        out[f"L{lvl}/formulas"] = formulas(inst)
        out[f"L{lvl}/domain"] = domain_prior(inst)
    unread = verifier.verify(by_level[2], "no graph here")
    out["unreadable/coarse"] = feedback(unread, "coarse")
    turn = refinement_messages((), "previous", out["L2/fine"], 2)[-1]
    out["refinement"] = f"{turn.role}: {turn.content}"
    return out


PINNED = {  # sha256[:16] of each text; e3b0c442... is the empty text
    "L2/none": "b8e4876f6dd696fd",
    "L2/coarse": "c577bb49c53bdcb0",
    "L2/fine": "732723266e89f2d6",
    "L2/checklist": "2161fb1dbf88991b",
    "L2/formulas": "e3b0c44298fc1c14",
    "L2/domain": "e3b0c44298fc1c14",
    "L3/none": "b8e4876f6dd696fd",
    "L3/coarse": "a5ed5c9fa9c3d247",
    "L3/fine": "13c905a364384575",
    "L3/checklist": "4e4cc18fed6883c4",
    "L3/formulas": "a5e8a349368264d7",
    "L3/domain": "e3b0c44298fc1c14",
    "L4/none": "b8e4876f6dd696fd",
    "L4/coarse": "a94f22afad2a6936",
    "L4/fine": "77e0b352e79a5d44",
    "L4/checklist": "a5a766f9dd7caec2",
    "L4/formulas": "0a7ac8a42eca2f1f",
    "L4/domain": "5d8b5c5c7a574d37",
    "L5/none": "b8e4876f6dd696fd",
    "L5/coarse": "7150e7b6f5e70b62",
    "L5/fine": "75f2209b71330c2a",
    "L5/checklist": "a2a5503309740a1e",
    "L5/formulas": "e3b0c44298fc1c14",
    "L5/domain": "e3b0c44298fc1c14",
    "unreadable/coarse": "f5f5a66aa16bb5a2",
    "refinement": "2afdc80528aa66e9",
}


def test_method_prompt_texts_are_pinned() -> None:
    texts = _texts()
    assert all(texts[k] for k in ("L2/fine", "L3/formulas", "L4/domain", "L5/fine",
                                  "unreadable/coarse", "L2/checklist"))
    got = {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in texts.items()}
    assert got == PINNED
