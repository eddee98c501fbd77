"""Chat messages for one instruction under one prompting strategy.

Promises of :func:`build_messages`:

- exactly two messages, ``system`` then ``user``; the text depends only on the instruction, the
  strategy, the exemplars given and ``infeasibility_levels`` (no randomness, no clock, no state);
- the system message is chosen by level family — L0–L2 ``system_default``, L3–L4
  ``system_attributed`` (node/edge attributes welcome), L5 or any instruction with a base graph
  ``system_edit`` (GraphEdit format, a full ``Graph[...]`` allowed) — and always holds the format
  example and the rule that every node and edge is listed explicitly;
- the infeasibility clause (explain why no graph exists instead of producing one) is in the
  system message for every level in ``infeasibility_levels`` (default: all levels; the
  reference release had it at L0–L2 only, see docs/PROMPTS.md);
- zero-shot/few-shot tell the model to output the graph alone; zero-cot/few-cot replace that
  sentence by "reason step by step first, then give the final graph last" and append the
  step-by-step suffix to the user message;
- the user message is ``[few-shot block]`` + the task + ``[CoT suffix]``, separated by blank
  lines; for an instruction with a base graph the task shows the base graph (canonical
  code-style text) before the instruction text;
- the few-shot block appears exactly for few-shot/few-cot, one item per exemplar, in the order
  given; few-cot items carry the exemplar's reasoning.

All wording comes from ``prompts/templates/*.txt``, as the run's :class:`~.texts.TemplateSet`
(``templates``; default: the packaged texts) holds them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import COT_STRATEGIES, FEW_SHOT_STRATEGIES, LEVELS, STRATEGIES

if TYPE_CHECKING:
    from pytest_graphinstruct.prompts.exemplars import Exemplar

#: Levels whose system prompt carries the infeasibility clause by default (all of them).
INFEASIBILITY_LEVELS: Final[frozenset[int]] = frozenset(LEVELS)

_BLANK_RUNS: Final = re.compile(r"\n{3,}")


def check_strategy(strategy: str) -> str:
    """``strategy`` itself when it is one of :data:`STRATEGIES`.

    Raises:
        ValueError: an unknown strategy; the message lists the valid ones.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown prompting strategy {strategy!r}; valid strategies: "
                         f"{', '.join(STRATEGIES)}")
    return strategy


def needs_exemplars(strategy: str) -> bool:
    """True for the strategies that show worked examples (few-shot, few-cot)."""
    return check_strategy(strategy) in FEW_SHOT_STRATEGIES


def family(instruction: Instruction) -> str:
    """The prompt family of ``instruction``: ``'edit'``, ``'attributed'`` or ``'default'``.

    ``'edit'`` for L5 and for any instruction that has a base graph; ``'attributed'`` for L3–L4;
    ``'default'`` otherwise.
    """
    if instruction.level == 5 or instruction.base_graph is not None:
        return "edit"
    if instruction.level in (3, 4):
        return "attributed"
    return "default"


def base_graph_text(instruction: Instruction) -> str | None:
    """The base graph as shown to the model, or ``None`` when the instruction has none.

    The canonical code-style text of the parsed base (:func:`serialize`, keeping the base's
    name), so the dataset's quirks (node lists written twice, a header ``nodes=`` that is double
    the real count) are not passed on.

    Raises:
        GraphInstructError: the base graph is malformed (a suite loaded without parsing its
            base graphs: :attr:`Instruction.base`).
    """
    base = instruction.base
    return None if base is None else serialize(base)


def task_text(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """The request as the user message states it: the instruction text, preceded by the base
    graph (``task_edit`` template) when there is one."""
    base = base_graph_text(instruction)
    if base is None:
        return instruction.text.strip()
    return templates.render("task_edit", base_graph=base, instruction=instruction.text.strip())


def system_prompt(
    instruction: Instruction,
    strategy: str,
    *,
    infeasibility_levels: Collection[int] = INFEASIBILITY_LEVELS,
    templates: TemplateSet = PACKAGED,
) -> str:
    """The system message text for ``instruction`` under ``strategy`` (see module doc)."""
    check_strategy(strategy)
    fam = family(instruction)
    cot = strategy in COT_STRATEGIES
    edit = fam == "edit"
    values: dict[str, str] = {
        "format": templates.render("format_edit" if edit else "format_code"),
        "infeasibility": (templates.render("infeasibility")
                          if instruction.level in infeasibility_levels else ""),
        "output_rule": templates.render(
            ("output_reasoned" if cot else "output_only") + ("_edit" if edit else "")
        ),
        "completeness": templates.render("anti_laziness"),
    }
    if fam == "attributed":
        values["attributes"] = templates.render("format_attributes")
    text = templates.render(f"system_{fam}", **values)
    return _BLANK_RUNS.sub("\n\n", text).strip()


def few_shot_block(
    exemplars: Sequence[Exemplar], *, reasoning: bool, infeasibility: bool,
    templates: TemplateSet = PACKAGED,
) -> str:
    """The worked-examples block: header, one item per exemplar (numbered from 1), footer.

    With ``reasoning`` each item shows the exemplar's reasoning paragraph (an exemplar without
    one shows the item without it).  The footer mentions the refusal option when
    ``infeasibility`` is true.
    """
    parts = [templates.render("few_shot_header")]
    for index, ex in enumerate(exemplars, 1):
        if reasoning and ex.reasoning:
            parts.append(templates.render("few_shot_item_cot", index=index,
                                      instruction=ex.instruction_text.strip(),
                                      reasoning=ex.reasoning.strip(), answer=ex.answer.strip()))
        else:
            parts.append(templates.render("few_shot_item", index=index,
                                      instruction=ex.instruction_text.strip(),
                                      answer=ex.answer.strip()))
    parts.append(templates.render("few_shot_footer_infeasible" if infeasibility
                              else "few_shot_footer"))
    return "\n\n".join(parts)


def user_prompt(
    instruction: Instruction,
    strategy: str,
    *,
    exemplars: Sequence[Exemplar] = (),
    infeasibility_levels: Collection[int] = INFEASIBILITY_LEVELS,
    templates: TemplateSet = PACKAGED,
) -> str:
    """The user message text for ``instruction`` under ``strategy`` (see module doc).

    Raises:
        ValueError: unknown strategy; exemplars given to a zero-shot strategy; no exemplars for
            a few-shot strategy.
    """
    check_strategy(strategy)
    few = strategy in FEW_SHOT_STRATEGIES
    if exemplars and not few:
        raise ValueError(f"strategy {strategy!r} takes no exemplars (got {len(exemplars)}); "
                         f"exemplars are for {', '.join(sorted(FEW_SHOT_STRATEGIES))}")
    if few and not exemplars:
        raise ValueError(f"strategy {strategy!r} needs at least one exemplar for "
                         f"{instruction.id} (ExemplarPool.select found none)")
    cot = strategy in COT_STRATEGIES
    edit = family(instruction) == "edit"
    parts: list[str] = []
    if few:
        parts.append(few_shot_block(exemplars, reasoning=cot,
                                    infeasibility=instruction.level in infeasibility_levels,
                                    templates=templates))
    parts.append(task_text(instruction, templates))
    if cot:
        parts.append(templates.render("cot_suffix_edit" if edit else "cot_suffix"))
    return "\n\n".join(parts)


def build_messages(
    instruction: Instruction,
    strategy: str,
    *,
    exemplars: Sequence[Exemplar] = (),
    infeasibility_levels: Collection[int] = INFEASIBILITY_LEVELS,
    templates: TemplateSet = PACKAGED,
) -> tuple[Message, ...]:
    """``(system, user)`` messages for ``instruction`` under ``strategy``.

    Args:
        instruction: the instruction to ask.
        strategy: one of :data:`STRATEGIES`.
        exemplars: worked examples for few-shot/few-cot (from
            :meth:`~.exemplars.ExemplarPool.select`), shown in the order given; must be empty
            for zero-shot/zero-cot.
        infeasibility_levels: levels whose prompts carry the infeasibility clause.
        templates: the run's prompt texts (``--gi-prompts``; default: the packaged ones).

    Raises:
        ValueError: unknown strategy (the message lists the valid ones), exemplars passed to a
            zero-shot strategy, or none passed to a few-shot strategy.
    """
    user = user_prompt(instruction, strategy, exemplars=exemplars,
                       infeasibility_levels=infeasibility_levels, templates=templates)
    system = system_prompt(instruction, strategy, infeasibility_levels=infeasibility_levels,
                           templates=templates)
    return (Message("system", system), Message("user", user))
