"""Workflow selection quality per graph and per task category; thresholds calibrated on some graphs only.

Run: .venv/bin/python bench/quality.py [--split NAME] [--calibrate] [--calibration-only] [--held-out-only]
                                      [--quick] [--lettings PATH] [--no-recall] [--held-out FOLDER ...]
                                      [--predictions FILE] [--compare FILE] [--misses calibration|all]

Graphs (docs/evaluation.md, "Workflow selection"), by named split (--split; SPLITS below):
  lettings-clinic (default since issue 16's second session): calibration lettings (../shared/fixtures/
               lettings relative to the repository root, or --lettings; its README calls it a calibration
               set) and clinic (bench/quality_data/); held out saas (bench/quality_data/) and the example
               shop (examples/shop/tasks.toml plus bench/quality_data/shop/tasks.toml);
  clinic-saas  the first session's split (calibration clinic + saas; held out lettings + shop);
  four-two     issue 16's third round: calibration lettings, clinic, saas and shop; held out the two graphs
               written in session 8 by authors who never saw the ranking code, transit and registry
               (bench/quality_data/, lettings format). Run it on the held-out graphs once per frozen change.
  six-two      session 9: calibrate on all six graphs above; hold out insurance and council (bench/quality_data/,
               lettings format, written in session 9 by authors who never saw the ranking code).
  eight-two    session 13: six-two's calibration graphs plus parcels and water (bench/quality_data/, written in
               session 13 by authors who never saw the ranking code, scored once unseen first); the same
               held-out insurance and council.
  eight-four   eight-two with hotel and fitness held out too (bench/quality_data/, written in session 13
               after the session's rules were frozen, by authors who never saw the ranking code).
  twelve-two   session 14: calibrate on all twelve graphs above (insurance, council, hotel and fitness had
               each been scored once as held-out graphs); hold out library and staffing (bench/quality_data/,
               written in session 14 by authors who never saw the ranking code), run once per frozen change.
  twelve-four  session 15: twelve-two's calibration graphs; held out library, staffing, museum and carhire
               (the last two written in session 15 by authors who never saw the ranking code, after the
               session's changes were frozen).
  sixteen-two  session 16: calibrate on all sixteen graphs above (library, staffing, museum and carhire had been
               scored as held-out graphs, their misses never read until then); hold out marina and solar
               (bench/quality_data/, written in session 16 by authors who never saw the ranking code).
  eighteen-two session 17: calibrate on all eighteen graphs above (marina and solar had been scored once as
               held-out graphs); hold out brewery and school (bench/quality_data/, written in session 17 by
               authors who never saw the ranking code).
  twenty-two   eighteen-two's graphs with brewery and school (scored once held out) as calibration; hold out
               theatre and removals (written in session 17 by authors who never saw the ranking code).
  twentytwo-two session 18: twenty-two's graphs with theatre and removals (scored once held out) as
               calibration; hold out storage and driving (written in session 18 by authors who never saw the
               ranking code).
  twentyfour-two session 18: twentytwo-two's graphs with storage and driving (scored once held out) as
               calibration; hold out pharmacy and golf (written in session 18, after its first rule was
               frozen, by authors who never saw the ranking code).
  twentysix-two fixed at the end of session 18 for the next change: twentyfour-two's graphs with pharmacy and
               golf (scored once held out) as calibration; hold out funeral and dental (written at the end of
               session 18 by authors who never saw the ranking code; selection has never run on them).
  Later splits (sessions 20–23; the comments at SPLITS say when each was fixed and what it holds out):
  twentysix-five, twentysix-eight, twentysix-eleven, thirtyseven-seven, fortyfour-five, fortynine-five,
  fortynine-eleven (session 22's refit held out), sixty-five (five unread first-brief graphs),
  sixty-otherbrief and sixtyfive-ten (graphs from the second brief, bench/quality_data/briefs/; SECOND_BRIEF),
  seventyfive-five (session 23: five more second-brief graphs, scored once; the confidence model's calibration
  graphs), eighty-five (session 24's refit held out on five second-brief graphs, scored once), eightyfive-five
  (three second-brief and two first-brief graphs; scored once at session 25's start, misses not read) and
  eightyfive-ten (session 25: those five and five more second-brief graphs written at its start), and
  ninetyfive-five (three second-brief and two first-brief graphs nobody has read or scored: the next frozen
  change's).
Every constant of the selection section of lamina/constants.py was set on the default split's calibration
graphs; no figure measured on a held-out graph ever set a constant. --calibration-only (while tuning)
evaluates the calibration graphs alone; --held-out-only the held-out graphs alone (a session start's score or a
frozen change's check, in a minute instead of a quarter of an hour on the 85-graph splits). --held-out FOLDER
(repeatable) adds a graph to the held-out set without code changes: a folder with product.toml (or
product/**/*.toml) + tasks.toml in the clinic/saas format, or repo/ + tasks.jsonl in the lettings format
(load_folder); it is named after the folder.
Selection runs in process through lamina.retrieval.selection.select_for_task, with the root index built
the way graphd builds it (workflow_documents -> workflow_meta -> root_doc_from_meta -> build_root_index)
and the real development embedder, so the bench measures what users get. Embeddings are cached by text
in memory (and on disk under $TMPDIR, keyed by the model digest), so re-running or grid-searching costs
seconds. --calibrate grid-searches the selection constants on the calibration graphs and prints the best
(it never reads a held-out graph's tasks). Root indexes include the facet vectors graphd stores
(lamina/graph/documents.py workflow_facets). For lettings, file Recall@10 of the packet's `sources` is
measured over an in-process index of its repository (chunked and embedded like the indexer does).
--compare FILE prints paired differences (this run − an earlier --predictions file) per graph and pooled,
matched by task id, with 95% bootstrap intervals over tasks.
--quick (for `make bench`) skips recall and evaluates an evenly spaced sample of at most 40 tasks per graph.
Final line: JSON {"bench": "quality", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import bootstrap_interval  # noqa: E402
from lamina.graph.documents import workflow_documents, workflow_facets  # noqa: E402
from lamina.graph.load import load_graph  # noqa: E402
from lamina.index.worker import workflow_meta  # noqa: E402
from lamina.retrieval.intents import selection_texts  # noqa: E402
from lamina.retrieval.late import LateIndex, applies, index_of_texts, late_scores  # noqa: E402
from lamina.retrieval.selection import (  # noqa: E402
    Facet,
    RootIndex,
    Thresholds,
    build_root_index,
    exact_matches,
    root_doc_from_meta,
    select_scored,
    task_scores,
)
from lamina.retrieval.wording import WordingModel, wording_probabilities  # noqa: E402
from lamina.runtime.embedder import TokenStates  # noqa: E402

CATEGORIES = ("exact_single", "exact_multi", "explicit", "paraphrase", "compound", "vague", "absent")
EXTRA_CATEGORIES = ("single_and",)  # one root's job said with "and": must stay selected
LETTINGS_CATEGORY = {
    "exact_single": "exact_single",
    "exact_multi": "exact_multi",
    "explicit": "explicit",
    "paraphrase_single": "paraphrase",
    "plain_multi": "compound",
    "ambiguous": "vague",
    "new_workflow": "absent",
}
# Named splits (calibration graphs, held-out graphs). "lettings-clinic" is the default since issue 16's
# second session: clinic + saas (short one-sentence tasks) did not predict lettings (long bug reports), and
# the lettings README calls it a calibration set, so it calibrates with clinic; saas and shop are held out.
# The split was fixed before any result under it was looked at (docs/evaluation.md, "Workflow selection").
# "four-two" (issue 16, third round, fixed before any result under it): calibrate on all four graphs above,
# hold out the two graphs written in session 8 by authors who never saw the ranking code.
# "six-two" (issue 16, session 9, fixed before any result under it): transit and registry had been read twice,
# so they join the calibration graphs; held out are insurance and council, written in session 9 by authors
# who never saw the ranking code (bench/quality_data/), run once per frozen change.
# "eight-two" (issue 16, session 13, fixed before any result under it): parcels and water, written in
# session 13 by authors who never saw the ranking code, were scored once as unseen graphs with the
# six-two constants (0.70 and 0.72, like insurance 0.71 and council 0.73, against 0.85 in sample) and
# then joined the calibration graphs; held out stay insurance and council.
# "eight-four" (session 13): eight-two plus hotel and fitness held out, written in session 13 by authors who
# never saw the ranking code, after every session-13 rule was frozen; scored once (hotel 0.83, fitness 0.76).
# "twelve-two" (session 14, fixed before library and staffing existed): the four graphs held out until then,
# each scored once, join the calibration graphs (their misses are read from now on); held out are library and
# staffing, written in session 14 by authors who never saw the ranking code.
# "twelve-four" (session 15, fixed before selection ever ran on museum and carhire): twelve-two's calibration
# graphs, held out library and staffing (scored twice, misses never read) and museum and carhire, written in
# session 15 by authors who never saw the ranking code, after every session-15 change was frozen.
# "sixteen-two" (session 16, fixed before selection ever ran on marina and solar): the four graphs held out in
# session 15 join the calibration graphs (their misses are read from now on); held out are marina and solar.
_TWELVE = (  # the calibration graphs of twelve-two and twelve-four
    "lettings",
    "clinic",
    "saas",
    "shop",
    "transit",
    "registry",
    "parcels",
    "water",
    "insurance",
    "council",
    "hotel",
    "fitness",
)
# Each later split calibrates on the one before's graphs plus the graphs it held out.
_SIXTEEN = (*_TWELVE, "library", "staffing", "museum", "carhire")
_EIGHTEEN = (*_SIXTEEN, "marina", "solar")
_TWENTY = (*_EIGHTEEN, "brewery", "school")
_TWENTY_TWO = (*_TWENTY, "theatre", "removals")
_TWENTY_FOUR = (*_TWENTY_TWO, "storage", "driving")
_TWENTY_SIX = (*_TWENTY_FOUR, "pharmacy", "golf")
# Session 20's held-out graphs, in the order they were written (three rounds after the learned decision's freeze).
_HELD_FIVE = ("funeral", "dental", "heating", "halls", "kennels")
_HELD_EIGHT = (*_HELD_FIVE, "bikeshare", "venue", "printshop")
_HELD_ELEVEN = (*_HELD_EIGHT, "phonerepair", "coworking", "catering")
_THIRTY_SEVEN = (*_TWENTY_SIX, *_HELD_ELEVEN)
# Session 21's held-out graphs, written by seven authors before selection ever ran on them; the split was fixed
# (and committed with them) before any was read or scored.
_HELD_SEVEN = ("laundry", "florist", "skiphire", "tutoring", "opticians", "campsite", "pestcontrol")
_FORTY_FOUR = (*_THIRTY_SEVEN, *_HELD_SEVEN)
# Written at the end of session 21 by five more authors; committed with split fortyfour-five before selection ran.
_HELD_FIVE_MORE = ("bakery", "musicschool", "salon", "gardencentre", "itsupport")
_FORTY_NINE = (*_FORTY_FOUR, *_HELD_FIVE_MORE)
# Written at the very end of session 21 for the next frozen change; committed with split fortynine-five before
# selection ever ran on them. Nobody has read or scored them.
_HELD_NEXT = ("ferry", "nursery", "cinema", "breakdown", "blockmanagement")
# Written at the start of session 22 by six more authors; committed with split fortynine-eleven before selection
# ever ran on them (nobody has read or scored them): with _HELD_NEXT, the held-out side of session 22's change.
_HELD_SIX_NEXT = ("locksmith", "zoo", "carpark", "charity", "carehome", "translation")
_SIXTY = (*_FORTY_NINE, *_HELD_NEXT, *_HELD_SIX_NEXT)
# Written during session 22 by five more authors, while that session's refit was held out on the eleven above;
# committed with split sixty-five before selection ran on them; scored once, held out in sixtyfive-ten.
_HELD_LAST_FIVE = ("flyingschool", "scaffolding", "cleaning", "photostudio", "allotments")
# Written during session 22 from a second brief (docs/evaluation.md, "Session 22"): every category in the same
# mix of lengths and voices, its wording not giving the category away (vague tasks long as often as short, absent
# ones as ordinary tickets, compound ones mostly without "also"/"then"). Committed with split
# sixty-otherbrief before selection ran on them; held out to test that what was learned on the first brief's
# graphs is how tasks are read, not how that brief wrote them.
_HELD_OTHER_BRIEF = ("broadband", "winemerchant", "animalrescue", "recordingstudio", "tyrefitter")
# Five more from the second brief, written while session 22 refitted on the first five; committed with split
# sixtyfive-ten before selection ran on them.
_HELD_OTHER_BRIEF_MORE = ("taxifirm", "swimschool", "pottery", "coachtours", "conveyancing")
# Five more from the second brief, written at session 23's start; committed with split seventyfive-five before
# selection ran on them.
_HELD_OTHER_BRIEF_THIRD = ("physio", "vegbox", "escaperoom", "camerahire", "weddings")
# Five more from the second brief, written at session 23's end; committed with split eighty-five, unread and
# unscored, for the next frozen change.
_HELD_OTHER_BRIEF_FOURTH = ("doggrooming", "bookshop", "chimneysweep", "tattoo", "bikerepair")
# Written at session 24's end, three from the second brief and two from the first; committed with split
# eightyfive-five, unread and unscored, for the next frozen change.
_HELD_SECOND_BRIEF_FIFTH = ("kitchenfitter", "stables", "icecream")
_HELD_FIRST_BRIEF_LAST = ("glazier", "bowling")
# Written at session 25's start from the second brief by five more authors; committed with split eightyfive-ten
# before selection ran on them.
_HELD_SECOND_BRIEF_SIXTH = ("farmshop", "dogwalker", "boatyard", "makerspace", "piano")
# Written at session 25's end, three from the second brief and two from the first; committed with split
# ninetyfive-five, unread and unscored, for the next frozen change.
_HELD_SECOND_BRIEF_SEVENTH = ("tailor", "climbingwall", "bikecourier")
_HELD_FIRST_BRIEF_NEXT = ("hostel", "sailingclub")
# Written at session 27's start, three from the second brief and two from the first; committed with split
# hundred-five before selection ran on them.
_HELD_SECOND_BRIEF_EIGHTH = ("apiary", "marquee", "framer")
_HELD_FIRST_BRIEF_NINTH = ("observatory", "foodbank")
# Written at session 28's start from the second brief by five more authors; committed with split
# hundredfive-five before selection ran on them.
_HELD_SECOND_BRIEF_NINTH = ("arborist", "icerink", "signwriter", "dairy", "scrapyard")
# Written later in session 28 from the second brief by five more authors; committed with split hundredten-five
# before selection ran on them.
_HELD_SECOND_BRIEF_TENTH = ("restoration", "orchard", "funfair", "planthire", "chocolatier")
# Written at session 28's end from the second brief by five more authors; committed with split hundredfifteen-five,
# unread and unscored, for the next frozen change.
_HELD_SECOND_BRIEF_ELEVENTH = ("glassworks", "beachhuts", "kayakhire", "upholstery", "treefarm")
# Written in session 29 from the second brief by five more authors; committed with split hundredtwenty-five,
# unread and unscored, for the frozen change after hundredfifteen-five's.
_HELD_SECOND_BRIEF_TWELFTH = ("canalboats", "sawmill", "balloonrides", "dancestudio", "steamrailway")
SECOND_BRIEF = (  # every graph written from the second brief
    *_HELD_OTHER_BRIEF,
    *_HELD_OTHER_BRIEF_MORE,
    *_HELD_OTHER_BRIEF_THIRD,
    *_HELD_OTHER_BRIEF_FOURTH,
    *_HELD_SECOND_BRIEF_FIFTH,
    *_HELD_SECOND_BRIEF_SIXTH,
    *_HELD_SECOND_BRIEF_SEVENTH,
    *_HELD_SECOND_BRIEF_EIGHTH,
    *_HELD_SECOND_BRIEF_NINTH,
    *_HELD_SECOND_BRIEF_TENTH,
    *_HELD_SECOND_BRIEF_ELEVENTH,
    *_HELD_SECOND_BRIEF_TWELFTH,
)
_SEVENTY_FIVE = (
    *_SIXTY,
    *_HELD_LAST_FIVE,
    *_HELD_OTHER_BRIEF,
    *_HELD_OTHER_BRIEF_MORE,
)  # every graph read by session 23
SPLITS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "lettings-clinic": (("lettings", "clinic"), ("saas", "shop")),
    "four-two": (("lettings", "clinic", "saas", "shop"), ("transit", "registry")),
    "six-two": (("lettings", "clinic", "saas", "shop", "transit", "registry"), ("insurance", "council")),
    "eight-two": (
        ("lettings", "clinic", "saas", "shop", "transit", "registry", "parcels", "water"),
        ("insurance", "council"),
    ),
    "eight-four": (
        ("lettings", "clinic", "saas", "shop", "transit", "registry", "parcels", "water"),
        ("insurance", "council", "hotel", "fitness"),
    ),
    "twelve-two": (
        _TWELVE,
        ("library", "staffing"),
    ),
    "twelve-four": (
        _TWELVE,
        ("library", "staffing", "museum", "carhire"),
    ),
    "sixteen-two": (_SIXTEEN, ("marina", "solar")),
    "eighteen-two": (_EIGHTEEN, ("brewery", "school")),
    "twenty-two": (_TWENTY, ("theatre", "removals")),
    "twentytwo-two": (_TWENTY_TWO, ("storage", "driving")),
    "twentyfour-two": (_TWENTY_FOUR, ("pharmacy", "golf")),
    "twentysix-two": (_TWENTY_SIX, ("funeral", "dental")),
    # session 20, fixed before selection ran on heating, halls and kennels (written after the learned decision
    # was frozen): the same calibration graphs, held out funeral and dental (scored once) and the three new ones
    "twentysix-five": (_TWENTY_SIX, _HELD_FIVE),
    # then, each fixed before selection ran on its three new graphs (written while the learned decision stood
    # unchanged since its freeze): bikeshare, venue and printshop; phonerepair, coworking and catering
    "twentysix-eight": (_TWENTY_SIX, _HELD_EIGHT),
    "twentysix-eleven": (_TWENTY_SIX, _HELD_ELEVEN),
    # session 21: calibrate on all 37 graphs read so far, hold out the seven written this session
    "thirtyseven-seven": (_THIRTY_SEVEN, _HELD_SEVEN),
    # then: calibrate on all 44 read graphs, hold out the five written at the session's end
    "fortyfour-five": (_FORTY_FOUR, _HELD_FIVE_MORE),
    # for the next session: calibrate on all 49 read graphs, hold out five nobody has read
    "fortynine-five": (_FORTY_NINE, _HELD_NEXT),
    # session 22: the same calibration graphs; held out the five above and six written at the session's start
    "fortynine-eleven": (_FORTY_NINE, (*_HELD_NEXT, *_HELD_SIX_NEXT)),
    # for the next frozen change: calibrate on all 60 graphs scored by then, hold out five nobody has read
    "sixty-five": (_SIXTY, _HELD_LAST_FIVE),
    # the same calibration graphs; held out five written from the second brief
    "sixty-otherbrief": (_SIXTY, _HELD_OTHER_BRIEF),
    # session 22's second change: calibrate on all 65 graphs scored by then (both briefs); hold out five unread
    # graphs of each brief
    "sixtyfive-ten": ((*_SIXTY, *_HELD_OTHER_BRIEF), (*_HELD_LAST_FIVE, *_HELD_OTHER_BRIEF_MORE)),
    # session 23: calibrate on all 75 graphs scored by then (both briefs); hold out five unread second-brief graphs
    "seventyfive-five": (_SEVENTY_FIVE, _HELD_OTHER_BRIEF_THIRD),
    # session 24: calibrate on all 80 graphs scored by session 23's end; hold out five unread second-brief graphs
    "eighty-five": ((*_SEVENTY_FIVE, *_HELD_OTHER_BRIEF_THIRD), _HELD_OTHER_BRIEF_FOURTH),
    # the next frozen change: calibrate on all 85 graphs scored by session 24's end; hold out five unread ones
    # (three of the second brief, two of the first)
    "eightyfive-five": (
        (*_SEVENTY_FIVE, *_HELD_OTHER_BRIEF_THIRD, *_HELD_OTHER_BRIEF_FOURTH),
        (*_HELD_SECOND_BRIEF_FIFTH, *_HELD_FIRST_BRIEF_LAST),
    ),
    # session 25: the same 85 calibration graphs; held out those five (scored once at the session's start, misses
    # not read) and five more second-brief graphs written at the session's start
    "eightyfive-ten": (
        (*_SEVENTY_FIVE, *_HELD_OTHER_BRIEF_THIRD, *_HELD_OTHER_BRIEF_FOURTH),
        (*_HELD_SECOND_BRIEF_FIFTH, *_HELD_FIRST_BRIEF_LAST, *_HELD_SECOND_BRIEF_SIXTH),
    ),
    # the next frozen change: calibrate on all 95 graphs scored by session 25's end; hold out five unread ones
    # (three of the second brief, two of the first)
    "ninetyfive-five": (
        (
            *_SEVENTY_FIVE,
            *_HELD_OTHER_BRIEF_THIRD,
            *_HELD_OTHER_BRIEF_FOURTH,
            *_HELD_SECOND_BRIEF_FIFTH,
            *_HELD_FIRST_BRIEF_LAST,
            *_HELD_SECOND_BRIEF_SIXTH,
        ),
        (*_HELD_SECOND_BRIEF_SEVENTH, *_HELD_FIRST_BRIEF_NEXT),
    ),
    "clinic-saas": (("clinic", "saas"), ("lettings", "shop")),  # issue 16's first session
}
# Session 26's fine-tuning measurement: every sixth calibration graph of ninetyfive-five is kept out of the
# fine-tuning data (bench/selection_finetune.py train --exclude ninetyfive-dev), so that selection can be
# measured on graphs the model never saw (bench/selection_finetune.py rank, bench/selection_decision.py).
SPLITS["ninetyfive-dev"] = (SPLITS["ninetyfive-five"][0][::6], SPLITS["ninetyfive-five"][1])
# ... and the four graphs written before the helpers' briefs (lettings by an outside author; clinic, saas and the
# example shop by the project's first sessions): does a model trained on the briefs' graphs read them better?
SPLITS["ninetyfive-originals"] = (("lettings", "clinic", "saas", "shop"), SPLITS["ninetyfive-five"][1])


def _after(previous: str, held_out: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The split that follows `previous` once its held-out graphs are scored: calibrate on its calibration and
    held-out graphs together; hold out `held_out`."""
    calibration, scored = SPLITS[previous]
    return (*calibration, *scored), held_out


# Session 27: calibrate on the 100 graphs scored by then (ninetyfive-five's 95 and its five held-out graphs,
# scored at sessions 26 and 27); hold out five written at session 27's start, unread.
SPLITS["hundred-five"] = _after("ninetyfive-five", (*_HELD_SECOND_BRIEF_EIGHTH, *_HELD_FIRST_BRIEF_NINTH))
# ... and its cross-fitting folds (bench/selection_decision.py --fold-models): the shipped selection model never
# trained on ninetyfive-dev's 16 graphs; the other 84, in name order, go round-robin to four folds, each scored by
# a model trained on the 79 graphs outside it (bench/selection_finetune.py train --exclude hundred-foldN).
_CROSS_FITTED = sorted(set(SPLITS["hundred-five"][0]) - set(SPLITS["ninetyfive-dev"][0]))
for _fold in range(4):
    SPLITS[f"hundred-fold{_fold + 1}"] = (tuple(_CROSS_FITTED[_fold::4]), SPLITS["hundred-five"][1])
# Session 28: calibrate on the 105 graphs scored by then (hundred-five's 100 and its five held-out graphs, each
# read by a selection model never trained on it: the five by the shipped one); hold out five written at session
# 28's start, unread.
SPLITS["hundredfive-five"] = _after("hundred-five", _HELD_SECOND_BRIEF_NINTH)
# ... and the next: calibrate on the 110 graphs scored by then; hold out five more written in session 28, unread.
SPLITS["hundredten-five"] = _after("hundredfive-five", _HELD_SECOND_BRIEF_TENTH)
# ... and the next frozen change's: calibrate on the 115 graphs scored by session 28's end; hold out five written
# at its end, unread and unscored.
SPLITS["hundredfifteen-five"] = _after("hundredten-five", _HELD_SECOND_BRIEF_ELEVENTH)
# ... and the one after: calibrate on those 120 graphs once hundredfifteen-five's five are scored; hold out five
# written in session 29, unread and unscored.
SPLITS["hundredtwenty-five"] = _after("hundredfifteen-five", _HELD_SECOND_BRIEF_TWELFTH)
DEFAULT_SPLIT = "lettings-clinic"
CALIBRATION, HELD_OUT = SPLITS[DEFAULT_SPLIT]
QUICK_TASKS = 40


def default_lettings() -> Path:
    """../shared/fixtures/lettings relative to the repository root, or to the main checkout when this is a
    git worktree (wherever the worktree lives: the main checkout is the parent of git's common directory)."""
    bases = [ROOT.parent, ROOT.parent.parent]
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if common.returncode == 0 and common.stdout.strip():
        bases.append(Path(common.stdout.strip()).parent.parent)
    for base in bases:
        if (base / "shared/fixtures/lettings/tasks.jsonl").exists():
            return base / "shared/fixtures/lettings"
    return ROOT.parent / "shared/fixtures/lettings"


@dataclass(frozen=True)
class Task:
    graph: str
    id: str
    text: str
    status: str
    workflows: tuple[str, ...]
    explicit: str | None
    category: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Graph:
    name: str
    index: RootIndex
    status_of: dict[str, str]
    tasks: tuple[Task, ...]
    repo: Path | None = None  # where expected files live (lettings)
    late: LateIndex | None = None  # the roots' late-interaction index, as graphd builds it


class VectorCache:
    """Embeddings by text, computed once per text; persisted per model digest so re-runs embed nothing."""

    def __init__(self, embedder: Any, wording_model: WordingModel | None = None) -> None:
        self.embedder = embedder
        # the wording model fitted on this model's vectors (lamina/retrieval/wording.py), when there is one
        self.wording_model = wording_model
        digest = str(getattr(getattr(embedder, "info", None), "model_digest", "model"))[:16]
        self.path = Path(tempfile.gettempdir()) / "lamina-quality-cache" / f"{digest}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path, allow_pickle=False) as data:
                self.vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        self.dirty = False
        # Token states by text (late interaction), in memory only: float32 states of every root text would
        # make the file hundreds of MB, and they must be the model's own, bit for bit, as graphd's are.
        self.token_states: dict[str, TokenStates] = {}

    def states(self, text: str) -> TokenStates | None:
        """A text's token states (Embedder.embed_with_states: the text alone, as graphd runs it), or None
        when the embedder gives none (a stand-in in the tests)."""
        if text not in self.token_states:
            embed_with_states = getattr(self.embedder, "embed_with_states", None)
            if embed_with_states is None:
                return None
            self.token_states[text] = embed_with_states(text)[1]
        return self.token_states[text]

    def wording(self, text: str) -> tuple[float, ...] | None:
        """What the text's wording alone suggests (each outcome's probability), as graphd computes it for a
        task; None without a wording model."""
        if self.wording_model is None:
            return None
        return wording_probabilities(self.get([text])[0], self.wording_model)

    def get(self, texts: Iterable[str]) -> list[np.ndarray]:
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self.vectors[text] = np.asarray(vector, dtype=np.float32)
            self.dirty = True
        return [self.vectors[t] for t in texts]

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        texts = sorted(self.vectors)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, texts=np.array(texts), vectors=np.vstack([self.vectors[t] for t in texts]))
        os.replace(tmp, self.path)


def selection_cache(wording: bool = True) -> VectorCache:
    """Vectors by the selection model (lamina/runtime/selection_model.py): what graphd reads the roots,
    their facets, the task and its intents with; with `wording`, the wording model shipped with it reads each
    task as graphd does (bench/selection_decision.py fits its own instead)."""
    from lamina.runtime.selection_model import load_selection_embedder, load_selection_wording

    return VectorCache(load_selection_embedder(threads=2), load_selection_wording() if wording else None)


def code_cache() -> VectorCache:
    """Vectors by the installed runtime's model: what graphd embeds code chunks and localizes with."""
    from lamina.runtime.embedder import load_embedder

    return VectorCache(load_embedder(threads=2))


def late_index(index: RootIndex, cache: VectorCache) -> LateIndex | None:
    """The roots' late-interaction index from their texts, as graphd's RetrievalService._late_index builds it."""
    return index_of_texts(index.texts, cache.states) if applies(len(index.roots)) else None


def root_index(folder: Path, globs: list[str], cache: VectorCache) -> tuple[RootIndex, dict[str, str], Any]:
    graph = load_graph(folder, globs)
    docs = workflow_documents(graph)
    vectors = cache.get(d.text for d in docs)
    entries = [
        (root_doc_from_meta(d.workflow, json.loads(workflow_meta(d))), d.text, v)
        for d, v in zip(docs, vectors, strict=True)
    ]
    facets = workflow_facets(graph)
    facet_vectors = cache.get(f.text for f in facets)
    stored = [  # as graphd holds them: keyed by the version's path (lamina/index/worker.py)
        Facet(f.workflow, f"facet:{f.workflow}:{f.key}", v, f.text)
        for f, v in zip(facets, facet_vectors, strict=True)
    ]
    return build_root_index(entries, stored), {w.id: w.status for w in graph.workflows}, graph


def _toml_tasks(name: str, path: Path, index: RootIndex, prefix: str | None = None) -> list[Task]:
    """Tasks of a tasks.toml, each with the id `<prefix>:<n>` (prefix: the folder's name unless given)."""
    prefix = prefix or path.parent.name
    tasks = []
    for n, t in enumerate(tomllib.loads(path.read_text())["task"]):
        status, workflows = t["status"], tuple(t.get("workflows", []))
        explicit = t.get("explicit")
        category = t.get("category")
        if category is None:
            named = set(exact_matches(t["text"], index.roots))
            if explicit:
                category = "explicit"
            elif status == "multi_workflow":
                category = "exact_multi" if set(workflows) <= named else "compound"
            elif status == "selected":
                category = "exact_single" if set(workflows) <= named else "paraphrase"
            elif status == "ambiguous":
                category = "vague"
            else:
                category = "absent"
        tasks.append(Task(name, f"{prefix}:{n + 1}", t["text"], status, workflows, explicit, category))
    return tasks


def _jsonl_tasks(name: str, folder: Path) -> list[Task]:
    """Tasks in the lettings fixture's format (tasks.jsonl: id, category, task, expected_status,
    expected_workflows, explicit_workflow, expected_files)."""
    tasks = []
    for line in (folder / "tasks.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        tasks.append(
            Task(
                name,
                t["id"],
                t["task"],
                t["expected_status"],
                tuple(t["expected_workflows"]),
                t.get("explicit_workflow"),
                LETTINGS_CATEGORY.get(t["category"], t["category"]),
                tuple(t.get("expected_files") or ()),
            )
        )
    return tasks


def load_folder(folder: Path, cache: VectorCache, name: str | None = None) -> Graph:
    """A graph from a folder in either format the bench knows, found by its files:
    - clinic/saas format: product.toml (or product/**/*.toml) and tasks.toml (keys as in
      bench/quality_data/clinic/tasks.toml: text, status, workflows, explicit, optional category);
    - lettings format: repo/ (with product/**/*.toml) and tasks.jsonl (the fixture's README); file
      Recall@10 of sources is measured over repo/ as well.
    The graph is named after the folder unless `name` is given."""
    name = name or folder.resolve().name
    if (folder / "tasks.jsonl").exists() and (folder / "repo").is_dir():
        repo = folder / "repo"
        index, status_of, _ = root_index(repo, ["product/**/*.toml"], cache)
        return Graph(
            name, index, status_of, tuple(_jsonl_tasks(name, folder)), repo, late_index(index, cache)
        )
    if (folder / "tasks.toml").exists():
        globs = ["product.toml"] if (folder / "product.toml").exists() else ["product/**/*.toml"]
        index, status_of, _ = root_index(folder, globs, cache)
        tasks = tuple(_toml_tasks(name, folder / "tasks.toml", index))
        return Graph(name, index, status_of, tasks, late=late_index(index, cache))
    raise SystemExit(f"{folder}: neither tasks.toml (+ product.toml) nor tasks.jsonl + repo/")


# Graphs kept under bench/quality_data/<name>/ (each folder in the clinic/saas or the lettings format).
_FOLDER_GRAPHS = (
    "clinic",
    "saas",
    "transit",
    "registry",
    "insurance",
    "council",
    "parcels",
    "water",
    "hotel",
    "fitness",
    "library",
    "staffing",
    "museum",
    "carhire",
    "marina",
    "solar",
    "brewery",
    "school",
    "theatre",
    "removals",
    "storage",
    "driving",
    "pharmacy",
    "golf",
    *_HELD_ELEVEN,
    *_HELD_SEVEN,
    *_HELD_FIVE_MORE,
    *_HELD_NEXT,
    *_HELD_SIX_NEXT,
    *_HELD_LAST_FIVE,
    *_HELD_OTHER_BRIEF,
    *_HELD_OTHER_BRIEF_MORE,
    *_HELD_OTHER_BRIEF_THIRD,
    *_HELD_OTHER_BRIEF_FOURTH,
    *_HELD_SECOND_BRIEF_FIFTH,
    *_HELD_FIRST_BRIEF_LAST,
    *_HELD_SECOND_BRIEF_SIXTH,
    *_HELD_SECOND_BRIEF_SEVENTH,
    *_HELD_FIRST_BRIEF_NEXT,
    *_HELD_SECOND_BRIEF_EIGHTH,
    *_HELD_FIRST_BRIEF_NINTH,
    *_HELD_SECOND_BRIEF_NINTH,
    *_HELD_SECOND_BRIEF_TENTH,
    *_HELD_SECOND_BRIEF_ELEVENTH,
    *_HELD_SECOND_BRIEF_TWELFTH,
)


def load_graphs(
    names: Sequence[str], cache: VectorCache, lettings: Path, folders: Sequence[Path] = ()
) -> list[Graph]:
    """The named graphs of this repository (clinic, saas, shop, lettings), then any `folders`."""
    graphs = []
    for name in names:
        if name in _FOLDER_GRAPHS:
            graphs.append(load_folder(ROOT / "bench/quality_data" / name, cache, name))
        elif name == "shop":
            folder = ROOT / "examples/shop"
            index, status_of, _ = root_index(folder, ["product/**/*.toml"], cache)
            # examples/shop and bench/quality_data/shop both live in a folder named shop: the example's tasks
            # are "example:<n>" so every task id of the graph is unique (paired comparisons match by id).
            tasks = _toml_tasks(name, folder / "tasks.toml", index, "example")
            tasks += _toml_tasks(name, ROOT / "bench/quality_data/shop/tasks.toml", index)
            graphs.append(Graph(name, index, status_of, tuple(tasks), late=late_index(index, cache)))
        elif name == "lettings":
            graphs.append(load_folder(lettings, cache, name))
        else:  # a split that names a graph this list lacks must fail, never run without it
            raise SystemExit(f"unknown graph {name!r}: add its folder to _FOLDER_GRAPHS in bench/quality.py")
    graphs.extend(load_folder(folder, cache) for folder in folders)
    return graphs


_SCORES: dict[tuple[str, str], Any] = {}


def task_scores_for(
    task: Task,
    graph: Graph,
    cache: VectorCache,
    index: RootIndex | None = None,
    vector_of: Callable[[str], np.ndarray] | None = None,
) -> Any:
    """The task's and its intents' scores against the graph's roots, as graphd computes them (task_scores;
    the whole task's late-interaction scores from the graph's late index). `index` and `vector_of` replace
    the graph's root index and the cached vectors of the task's texts (bench/selection_evidence.py)."""
    idx = index or graph.index
    texts = selection_texts(task.text)
    vectors = dict(zip(texts, [vector_of(t) for t in texts] if vector_of else cache.get(texts), strict=True))
    task_states = None if graph.late is None else cache.states(task.text)
    late = None if graph.late is None or task_states is None else late_scores(graph.late, task_states)
    return task_scores(
        task.text,
        idx.roots,
        idx.bm25,
        idx.matrix,
        vectors[task.text],
        vectors,
        idx.facets,
        idx.lexicon,
        late,
        cache.wording(task.text),
    )


def predict(task: Task, graph: Graph, cache: VectorCache, th: Thresholds) -> tuple[str, tuple[str, ...]]:
    """What `lamina work prepare` selects: select_for_task = task_scores + select, with the scores (which
    no threshold changes) computed once per task so that a grid search costs seconds."""
    return predict_with_confidence(task, graph, cache, th)[0]


def predict_with_confidence(
    task: Task, graph: Graph, cache: VectorCache, th: Thresholds
) -> tuple[tuple[str, tuple[str, ...]], float | None]:
    """predict's outcome and the packet's `selection.confidence` for it."""
    if task.explicit:  # the --workflow path: no selection, but the id must be an active workflow
        ok = graph.status_of.get(task.explicit) == "active"
        return (("selected", (task.explicit,)), 1.0) if ok else (("error", ()), None)
    key = (graph.name, task.text)
    if key not in _SCORES:
        _SCORES[key] = task_scores_for(task, graph, cache)
    sel = selection_of(task, graph.index, _SCORES[key], th)
    return (sel.status, tuple(sorted(sel.workflows))), sel.confidence


def selection_of(task: Task, index: RootIndex, scores: Any, th: Thresholds) -> Any:
    """The selection.Selection `select` gives for the task's scores (task_scores_for)."""
    whole, intents = scores
    return select_scored(task.text, index.roots, whole, intents, th)


def decided(task: Task, index: RootIndex, scores: Any, th: Thresholds) -> tuple[str, tuple[str, ...]]:
    """The outcome `select` gives for the task's scores (task_scores_for), as (status, sorted workflows)."""
    sel = selection_of(task, index, scores, th)
    return sel.status, tuple(sorted(sel.workflows))


CONFIDENCE_BINS = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0)


def reliability(rated: Sequence[tuple[float | None, bool]]) -> list[str]:
    """How far `selection.confidence` can be trusted, from (confidence, right) pairs: per confidence bin the
    tasks, their mean confidence and the share right (calibrated: the two agree); and the accuracy of the most
    confident half and quarter of the tasks against all of them (useful: a user who checks only the less
    confident tasks by hand gets the higher figure on the rest). Tasks without a confidence are counted apart."""
    known = [(c, ok) for c, ok in rated if c is not None]
    lines = [f"  {len(known)} tasks with a confidence, {len(rated) - len(known)} without"]
    if not known:
        return lines
    for low, high in itertools.pairwise(CONFIDENCE_BINS):
        inside = [(c, ok) for c, ok in known if low <= c < high or (high == 1.0 and c == 1.0)]
        if inside:
            lines.append(
                f"  confidence [{low:.1f}, {high:.1f}{']' if high == 1.0 else ')'}: {len(inside):>5} tasks, "
                f"mean {sum(c for c, _ in inside) / len(inside):.2f}, right {sum(ok for _, ok in inside) / len(inside):.2f}"
            )
    ordered = sorted(known, key=lambda r: -r[0])
    for share in (1.0, 0.5, 0.25):
        top = ordered[: max(1, round(len(ordered) * share))]
        lines.append(f"  the {share:.0%} most confident: {sum(ok for _, ok in top)}/{len(top)} right")
    return lines


def correct(task: Task, got: tuple[str, tuple[str, ...]]) -> bool:
    return got[0] == task.status and got[1] == tuple(sorted(task.workflows))


Score = dict[str, tuple[int, int]]  # category -> (correct, total)


def evaluate(
    graphs: Sequence[Graph], cache: VectorCache, th: Thresholds, limit: int | None = None
) -> dict[str, Score]:
    out: dict[str, Score] = {}
    for g in graphs:
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        n = len(g.tasks)
        picked = g.tasks if limit is None or n <= limit else [g.tasks[i * n // limit] for i in range(limit)]
        for task in picked:  # --quick: an evenly spaced sample, so every category stays represented
            ok = correct(task, predict(task, g, cache, th))
            counts[task.category][0] += int(ok)
            counts[task.category][1] += 1
        out[g.name] = {k: (v[0], v[1]) for k, v in counts.items()}
    return out


def scores_of(graphs: Sequence[Graph], rows: Sequence[dict[str, Any]]) -> dict[str, Score]:
    """evaluate's tables from prediction_rows (every task), so a full run decides each task once."""
    counts: dict[str, dict[str, list[int]]] = {g.name: defaultdict(lambda: [0, 0]) for g in graphs}
    for row in rows:
        counts[row["graph"]][row["category"]][0] += int(row["correct"])
        counts[row["graph"]][row["category"]][1] += 1
    return {g: {k: (v[0], v[1]) for k, v in score.items()} for g, score in counts.items()}


def overall(score: Score) -> tuple[int, int]:
    return sum(c for c, _ in score.values()), sum(t for _, t in score.values())


def objective(scores: dict[str, Score]) -> float:
    """Per graph the mean of overall accuracy and the worst category's accuracy (a threshold must not buy
    overall accuracy with one category), averaged over graphs."""
    values = []
    for score in scores.values():
        c, t = overall(score)
        worst = min(cc / tt for cc, tt in score.values() if tt)
        values.append((c / max(1, t) + worst) / 2)
    return sum(values) / max(1, len(values))


def macro(scores: dict[str, Score]) -> float:
    """The mean over graphs of the mean per-category accuracy: breaks the objective's ties, which are many
    because one category's gain leaves the worst category (and so the objective) unchanged."""
    values = [
        sum(c / t for c, t in s.values() if t) / max(1, sum(1 for _, t in s.values() if t))
        for s in scores.values()
    ]
    return sum(values) / max(1, len(values))


CALIBRATION_GRID: dict[str, list[Any]] = {
    "dense_min_cosine": [0.25, 0.30, 0.35, 0.40, 0.45, 0.5, 0.6, 9.0],
    "dense_min_lift": [0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.20, None],
    "agreed_min_lift": [0.06, 0.08, 0.10, 0.12, 0.14, None],
    "intent_min_lift": [0.0, 0.08, 0.10, 0.12, 0.15, 0.18, 0.22],
    "lexical_min_coverage": [0.34, 0.5, 0.67, 0.8, 1.01],
    "select_min_margin": [0.0, 0.0005, 0.001, 0.002, 0.004],
    "dense_ambiguity_margin": [0.0, 0.01, 0.02, 0.03, 0.05, 0.08],
    "intent_min_cosine": [0.25, 0.30, 0.35, 0.40, 0.45, 0.50],
    "intent_margin": [0.0, 0.02, 0.05, 0.08, 0.12, 0.16],
    "inactive_margin": [0.0, 0.02, 0.05, 0.1, 0.2, 9.0],
    "terse_max_words": [0, 3, 4, 5, 6, 7, 8, 9],
    "terse_ambiguity_margin": [0.02, 0.05, 0.1, 0.15, 0.2, 0.3],
    "compound_max_rank": [2, 3, 5, 10, 99],
    "lexical_ambiguity_margin": [0.0, 0.1, 0.2, 0.3, 0.4, None],
    "compound_same_sentence": [False, True],
    "intent_prefers_fused": [False, True],
    "terse_trusts_action": [False, True],
    "agreed_min_cosine": [9.0, 0.35, 0.3, 0.25, 0.2, 0.15],
    "compound_pair_only": [False, True],
    "intent_picks_by_cosine": [False, True],
}


def calibrate(graphs: Sequence[Graph], cache: VectorCache, base: Thresholds) -> Thresholds:
    """Coordinate ascent over CALIBRATION_GRID from `base` (each constant in turn over its grid, the others
    held, until a whole pass changes nothing; ties keep the current value), maximising `objective`, ties
    broken by `macro`."""

    def measure(th: Thresholds) -> tuple[float, float]:
        scores = evaluate(graphs, cache, th)
        return round(objective(scores), 9), round(macro(scores), 9)

    best_th, best = base, measure(base)
    for _ in range(6):
        changed = False
        for name, values in CALIBRATION_GRID.items():
            for value in values:
                th = replace(best_th, **{name: value})
                score = measure(th)
                if score > best:
                    best, best_th, changed = score, th, True
        if not changed:
            break
    print(
        f"calibrated on {', '.join(g.name for g in graphs)}: objective {best[0]:.3f} (macro {best[1]:.3f}) with {best_th}"
    )
    return best_th


# --- file Recall@10 of sources (lettings) ------------------------------------------------------------
def source_corpus(repo: Path, cache: VectorCache) -> Any:
    """The repository's chunks as graphd ranks them: each with its role (lamina/repo/roles.py, the
    repository's lamina.toml), and only code embedded (session 32: before, every chunk was code here)."""
    from lamina.chunking import chunk_file
    from lamina.config import load_config
    from lamina.repo.roles import EMBEDDED_ROLES, chunk_role, file_role, role_rules
    from lamina.retrieval.dense import as_unit_matrix
    from lamina.retrieval.localization import build_chunk_corpus

    rules = role_rules(load_config(repo)) if (repo / "lamina.toml").exists() else None
    chunks, roles = [], []
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_file() and not rel.startswith("product/"):  # graph files never appear in sources
            role = file_role(rel, rules)
            for chunk in chunk_file(rel, path.read_bytes()):
                chunks.append(chunk)
                roles.append(chunk_role(role, rel, chunk.symbol))
    matrix = as_unit_matrix(np.vstack(cache.get(c.text for c in chunks)))
    matrix = np.where(np.asarray([r in EMBEDDED_ROLES for r in roles])[:, None], matrix, 0.0)
    return build_chunk_corpus(
        [c.path for c in chunks],
        [c.symbol for c in chunks],
        [c.kind for c in chunks],
        [c.start_line for c in chunks],
        [c.end_line for c in chunks],
        [c.text for c in chunks],
        matrix,
        roles=roles,
    )


def file_recall(
    graph: Graph, cache: VectorCache, selection: VectorCache, th: Thresholds, k: int = 10
) -> tuple[float, int]:
    """File Recall@10 of the packet's sources, as `work prepare` makes them: the task selected (predict),
    its workflows' closure read from a real product store (lamina/graph/store.py, in a temporary folder),
    their words given to localization with the task (session 32)."""
    from lamina.graph import ladybug
    from lamina.graph.closure import workflow_words
    from lamina.graph.load import load_graph
    from lamina.graph.store import ProductStore
    from lamina.graph.version import graph_version
    from lamina.retrieval.localization import localize_all

    assert graph.repo is not None
    corpus = source_corpus(graph.repo, cache)
    product = load_graph(graph.repo, ["product/**/*.toml"])
    recalls = []
    with tempfile.TemporaryDirectory() as folder:
        database = ladybug.open_database(Path(folder) / "product").database
        connection = ladybug.Connection(database)
        store = ProductStore(connection)
        store.replace(product, graph_version(product))
        for task in graph.tasks:
            if not task.files:
                continue
            _, workflows = predict(task, graph, selection, th)
            words = workflow_words(store.closure(list(workflows)), workflows) if workflows else ""
            sources = localize_all(corpus, task.text, cache.get([task.text])[0], workflow_words=words).sources
            files = list(dict.fromkeys(s["file"] for s in sources))[:k]
            recalls.append(sum(f in files for f in task.files) / len(task.files))
        connection.close()
        database.close()
    return (sum(recalls) / len(recalls) if recalls else 0.0), len(recalls)


def ranks_first(task: Task, scores: Any, roots: Sequence[Any]) -> bool:
    """The fused ranking of `scores` (a selection.TextScores) puts the task's labelled root first among the
    active roots."""
    from lamina.retrieval.selection import rank_roots

    active = [c.workflow for c in rank_roots(scores, roots) if c.filtered is None]
    return bool(active) and active[0] == task.workflows[0]


def ranked_first(graph: Graph, cache: VectorCache) -> tuple[int, int]:
    """Paraphrases whose labelled root the fused ranking puts first among active roots (no threshold
    involved): the ranking's share of the errors, against the decision's (render prints both)."""
    first = total = 0
    for task in graph.tasks:
        if task.category != "paraphrase" or task.explicit:
            continue
        predict(task, graph, cache, Thresholds())  # fills _SCORES
        whole, _ = _SCORES[(graph.name, task.text)]
        first += ranks_first(task, whole, graph.index.roots)
        total += 1
    return first, total


def render(name: str, role: str, score: Score) -> list[str]:
    lines = [f"{name} ({role})", f"  {'category':<14}{'correct':>10}{'accuracy':>10}"]
    for category in CATEGORIES + EXTRA_CATEGORIES:
        if category in score:
            c, t = score[category]
            lines.append(f"  {category:<14}{f'{c}/{t}':>10}{c / t:>10.2f}")
    c, t = overall(score)
    lines.append(f"  {'overall':<14}{f'{c}/{t}':>10}{c / max(1, t):>10.2f}")
    return lines


def misses(graphs: Sequence[Graph], cache: VectorCache, th: Thresholds, show: Callable[[str], None]) -> None:
    for g in graphs:
        for task in g.tasks:
            got = predict(task, g, cache, th)
            if not correct(task, got):
                show(f"  {g.name} {task.id} [{task.category}] want {task.status} {list(task.workflows)} "
                     f"got {got[0]} {list(got[1])}: {task.text}")  # fmt: skip


def prediction_rows(
    graphs: Sequence[Graph], cache: VectorCache, th: Thresholds, calibration: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per task: graph, role, id, category, expected and predicted outcome, correct, and the selection's
    confidence (what --predictions writes, --compare pairs and the reliability table reads)."""
    rows = []
    for g in graphs:
        for task in g.tasks:
            got, confidence = predict_with_confidence(task, g, cache, th)
            rows.append(
                {
                    "graph": g.name,
                    "role": "calibration" if g.name in calibration else "held out",
                    "id": task.id,
                    "category": task.category,
                    "want": [task.status, sorted(task.workflows)],
                    "got": [got[0], list(got[1])],
                    "correct": correct(task, got),
                    "confidence": confidence,
                }
            )
    return rows


def write_predictions(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """prediction_rows as JSON lines."""
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")


def paired_differences(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], resamples: int = 2000, seed: int = 0
) -> list[tuple[str, int, int, int, float, float, float, int, int]]:
    """Per graph (and pooled over them, "all"; and over the held-out graphs alone, "held out", when the runs
    also hold calibration graphs) the paired difference after − before in accuracy over the tasks both runs
    predicted (matched by graph and id): (graph, n, correct before, correct after, mean difference, 95%
    percentile-bootstrap interval over tasks, fixed, broken)."""
    old = {(r["graph"], r["id"]): bool(r["correct"]) for r in before}
    held_out = {r["graph"] for r in after if r.get("role") == "held out"}
    pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for r in after:
        key = (r["graph"], r["id"])
        if key in old:
            pairs[r["graph"]].append((old[key], bool(r["correct"])))
    graphs = list(pairs)
    if len(graphs) > 1:
        pairs["all"] = [p for g in graphs for p in pairs[g]]
    if held_out & set(graphs) and not set(graphs) <= held_out:
        pairs["held out"] = [p for g in graphs if g in held_out for p in pairs[g]]
    rng = np.random.default_rng(seed)
    out = []
    for graph, rows in pairs.items():
        diff = np.array([int(a) - int(b) for b, a in rows], dtype=np.float64)
        lo, hi = bootstrap_interval(diff, resamples, rng)
        out.append(
            (
                graph,
                len(rows),
                sum(b for b, _ in rows),
                sum(a for _, a in rows),
                float(diff.mean()),
                float(lo),
                float(hi),
                int((diff > 0).sum()),
                int((diff < 0).sum()),
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--calibrate", action="store_true", help="grid-search the constants on the split's calibration graphs"
    )
    parser.add_argument("--split", choices=sorted(SPLITS), default=DEFAULT_SPLIT, help="calibration/held out")
    parser.add_argument(
        "--quick", action="store_true", help="40 evenly spaced tasks per graph, no recall (make bench)"
    )
    parser.add_argument("--lettings", type=Path, default=default_lettings())
    parser.add_argument(
        "--calibration-only", action="store_true", help="evaluate the calibration graphs only (while tuning)"
    )
    parser.add_argument(
        "--held-out-only",
        action="store_true",
        help="evaluate the held-out graphs only (a session start's score or a frozen change's check)",
    )
    parser.add_argument(
        "--held-out",
        type=Path,
        action="append",
        default=[],
        metavar="FOLDER",
        help="one more held-out graph (repeatable): a folder with product.toml + tasks.toml, or repo/ + "
        "tasks.jsonl like the lettings fixture; named after the folder",
    )
    parser.add_argument("--no-recall", action="store_true", help="skip file Recall@10 (graphs with a repo/)")
    parser.add_argument("--misses", choices=("calibration", "all"), help="list the tasks selected wrongly")
    parser.add_argument(
        "--predictions", type=Path, help="write every task's prediction (JSON lines) for paired comparisons"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="FILE",
        help="a --predictions file of an earlier run: print paired differences (this run − that one) per graph",
    )
    args = parser.parse_args()
    if args.held_out_only and (args.calibrate or args.calibration_only):
        parser.error(
            "--held-out-only decides no calibration graph: not with --calibrate or --calibration-only"
        )
    cache = selection_cache()
    calibration_names, held_out_names = SPLITS[args.split]
    have_lettings = (args.lettings / "tasks.jsonl").exists()
    if not have_lettings:
        print(f"lettings fixture not found at {args.lettings}: left out")
    held_out = [n for n in held_out_names if (n != "lettings" or have_lettings) and not args.calibration_only]
    calibration = load_graphs(
        [n for n in calibration_names if (n != "lettings" or have_lettings) and not args.held_out_only],
        cache,
        args.lettings,
    )
    th = calibrate(calibration, cache, Thresholds()) if args.calibrate else Thresholds()
    extra = [] if args.calibration_only else args.held_out
    graphs = calibration + load_graphs(held_out, cache, args.lettings, extra)
    clash = [g.name for g in graphs[len(calibration) :] if g.name in calibration_names]
    if clash:
        raise SystemExit(f"--held-out graph named like a calibration graph: {clash}")
    # every task's outcome and confidence, once, for the tables, the reliability table, --predictions and
    # --compare; --quick decides only an evenly spaced sample of each graph (evaluate)
    rows = [] if args.quick else prediction_rows(graphs, cache, th, calibration_names)
    scores = evaluate(graphs, cache, th, QUICK_TASKS) if args.quick else scores_of(graphs, rows)
    print(f"thresholds: {th}")
    figures = []
    code: VectorCache | None = None  # the runtime model's vectors, for file recall
    for g in graphs:
        role = "calibration" if g.name in calibration_names else "held out"
        print("\n".join(render(g.name, role, scores[g.name])))
        first, paraphrases = ranked_first(g, cache)
        print(f"  paraphrases whose labelled root the fused ranking puts first: {first}/{paraphrases}")
        c, t = overall(scores[g.name])
        figures.append(
            {
                "name": f"selection accuracy {g.name} ({role})",
                "value": round(c / max(1, t), 4),
                "unit": "fraction",
                "baseline": None,
                "ratio": None,
                "target": "≥ 0.85 held out" if role == "held out" else "",
                "per_category": {k: list(v) for k, v in scores[g.name].items()},
            }
        )
        if g.repo is not None and any(t.files for t in g.tasks) and not (args.quick or args.no_recall):
            code = code or code_cache()  # loaded only when some graph has files to recall
            recall, n = file_recall(
                g, code, cache, th
            )  # graphs without expected files have nothing to recall
            print(f"  file Recall@10 of sources over {n} tasks with expected files: {recall:.3f}")
            figures.append(
                {
                    "name": f"file Recall@10 {g.name}",
                    "value": round(recall, 4),
                    "unit": "fraction",
                    "baseline": None,
                    "ratio": None,
                    "target": "",
                }  # fmt: skip
            )
    for role in ("calibration", "held out"):
        rated = [(r["confidence"], r["correct"]) for r in rows if r["role"] == role]
        if rated:
            print(f"selection.confidence against being right, {role} graphs:")
            print("\n".join(reliability(rated)))
    if (args.predictions or args.compare) and not rows:
        rows = prediction_rows(graphs, cache, th, calibration_names)
    if args.predictions:
        write_predictions(args.predictions, rows)
    if args.compare:
        now = rows
        before = [json.loads(line) for line in args.compare.read_text().splitlines() if line.strip()]
        for graph, n, b, a, d, lo, hi, fixed, broken in paired_differences(before, now):
            print(
                f"paired {graph}: {b}/{n} -> {a}/{n}, difference {d:+.3f} [{lo:+.3f}, {hi:+.3f}] "
                f"({fixed} fixed, {broken} broken)"
            )
    if args.misses:
        misses(calibration if args.misses == "calibration" else graphs, cache, th, print)
    cache.save()
    if code is not None:
        code.save()
    print(json.dumps({"bench": "quality", "figures": figures}))


if __name__ == "__main__":
    main()
