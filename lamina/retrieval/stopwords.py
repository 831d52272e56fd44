"""English function words that carry no meaning in a task: kept out of a task's scoring and reasons.

The index side (lamina/retrieval/tokenize.py STOPWORDS) drops only words that are noise in *both* a task
and code; this list is for reading a task written in plain English, where "not", "do", "when", "should"
say nothing about which code or workflow is meant. Compared as case-folded, unstemmed words.
"""

from __future__ import annotations

TASK_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during each
    few for from further had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself just let me more most must mustn my myself no nor not now of off on
    once only or other ought our ours ourselves out over own same shall shan she should shouldn so some
    such than that the their theirs them themselves then there these they this those through to too
    under until up upon us very was wasn we were weren what when where which while who whom why will
    with won would wouldn you your yours yourself yourselves
    """.split()
)

# Prefixes a task writes before a hyphen ("non-repeating", "multi-dimensional", "re-use", "pre-release"): alone they
# say nothing and match anything ("non" was a matched word of three of five sources; "pre" stems to "pr", a pull
# request's). Only the prefix part of such a hyphenated word is left out of a task's scoring; the word's other parts
# and its whole form stay (a new-user run, session 39). Not "post" or "over": HTTP's POST, Go's `over` are code.
HYPHEN_PREFIXES: frozenset[str] = frozenset(
    "anti bi co de inter intra mid mis multi non pre re semi sub tri un".split()
)
