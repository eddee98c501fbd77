"""Pins the method prompt texts (VGIG's feedback at every granularity, the refinement turn,
CAAP's extras, the domain priors) for fixed instructions and answers: a change to any of them,
in code or in ``prompts/templates/``, must change this test on purpose."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_graphinstruct.methods.caap import checklist, domain_prior, formulas
from pytest_graphinstruct.methods.feedback import feedback
from pytest_graphinstruct.methods.iterative import refinement_messages
from pytest_graphinstruct.methods.priors import PRIORS, render_prior
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[2]
WRONG = ("Graph[name='y', nodes=6] { node_list = ['a','b','c','d','e','f']; "
         "edge_list = [('a','b'),('b','c'),('c','a'),('d','e')]; }")
#: scattered nodes: more bullets than are shown, components, missing edges, counts "of N"
SPARSE = ("Graph[name='y', nodes=12] { node_list = ['a','b','c','d','e','f','g','h','i','j',"
          "'k','l']; edge_list = [('a','b')]; }")


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
        out[f"L{lvl}/fine-sparse"] = feedback(verifier.verify(inst, SPARSE), "fine",
                                              instruction=inst)
        out[f"L{lvl}/checklist"] = checklist(inst)
        out[f"L{lvl}/formulas"] = formulas(inst)
        out[f"L{lvl}/domain"] = domain_prior(inst)
    unread = verifier.verify(by_level[2], "no graph here")
    out["unreadable/coarse"] = feedback(unread, "coarse")
    turn = refinement_messages((), "previous", out["L2/fine"], 2)[-1]
    out["refinement"] = f"{turn.role}: {turn.content}"
    l5 = by_level[5]
    assert l5.base_graph is not None
    out["L5/fine-unchanged"] = feedback(verifier.verify(l5, l5.base_graph), "fine",
                                        instruction=l5)
    for domain in PRIORS:
        out[f"prior/{domain}"] = render_prior(domain, 25)
    out["prior/social-unsized"] = render_prior("social", None)
    return out


PINNED = {  # sha256[:16] of each text; e3b0c442... is the empty text
    "L2/none": "b8e4876f6dd696fd",
    "L2/coarse": "c577bb49c53bdcb0",
    "L2/fine": "732723266e89f2d6",
    "L2/fine-sparse": "b38e0445c0ad3408",
    "L2/checklist": "2161fb1dbf88991b",
    "L2/formulas": "e3b0c44298fc1c14",
    "L2/domain": "e3b0c44298fc1c14",
    "L3/none": "b8e4876f6dd696fd",
    "L3/coarse": "a5ed5c9fa9c3d247",
    "L3/fine": "13c905a364384575",
    "L3/fine-sparse": "391c4288b7d12a8a",
    "L3/checklist": "4e4cc18fed6883c4",
    "L3/formulas": "a5e8a349368264d7",
    "L3/domain": "e3b0c44298fc1c14",
    "L4/none": "b8e4876f6dd696fd",
    "L4/coarse": "a94f22afad2a6936",
    "L4/fine": "77e0b352e79a5d44",
    "L4/fine-sparse": "7a77636719742201",
    "L4/checklist": "a5a766f9dd7caec2",
    "L4/formulas": "0a7ac8a42eca2f1f",
    "L4/domain": "5d8b5c5c7a574d37",
    "L5/none": "b8e4876f6dd696fd",
    "L5/coarse": "7150e7b6f5e70b62",
    "L5/fine": "75f2209b71330c2a",
    "L5/fine-sparse": "02c34f200021da31",
    "L5/checklist": "a2a5503309740a1e",
    "L5/formulas": "e3b0c44298fc1c14",
    "L5/domain": "e3b0c44298fc1c14",
    "unreadable/coarse": "f5f5a66aa16bb5a2",
    "refinement": "2afdc80528aa66e9",
    "L5/fine-unchanged": "3b12e9e1875b52e8",
    "prior/social": "5deadad2b5d83569",
    "prior/citation": "6a9bbef5184033ba",
    "prior/biological": "fbb9f8ac4d3c1390",
    "prior/ecological": "0501be6034256347",
    "prior/communication": "4f45fd7fcad3cbfd",
    "prior/infrastructure": "a109716b536a63f5",
    "prior/knowledge_graph": "56fa0b710947c2a4",
    "prior/molecular": "a6eaac8bceb82e82",
    "prior/social-unsized": "af1e958a73c6fdf3",
}


def test_method_prompt_texts_are_pinned() -> None:
    texts = _texts()
    assert all(texts[k] for k in ("L2/fine", "L3/formulas", "L4/domain", "L5/fine",
                                  "unreadable/coarse", "L2/checklist"))
    got = {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in texts.items()}
    assert got == PINNED
