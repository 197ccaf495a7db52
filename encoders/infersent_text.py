"""InferSent's text side: tokenisation, sentence markers and the words kept (after the official ``models.py``
of facebookresearch/InferSent, Conneau et al. 2017).

- Version 1 wraps a sentence in ``<s> … </s>`` (GloVe 840B vectors); version 2 in ``<p> … </p>`` (fastText
  crawl-300d-2M vectors).
- Tokenisation (``tokenize``): ``"split"`` splits on whitespace, which is what SentEval does with InferSent
  (``examples/infersent.py`` calls ``encode(..., tokenize=False)`` on its pre-tokenised task files) and so
  what published SentEval numbers used; ``"nltk"`` is the official ``encode(tokenize=True)``: NLTK's
  ``word_tokenize`` (Punkt sentence splitting, then the Treebank word tokenizer), and for version 2 the
  "~Moses" tweak `` n't `` → ``n 't``. ``word_tokenize`` needs NLTK's ``punkt_tab`` data, which is a separate
  download; ``"nltk-line"`` is the fallback that needs no data: the same Treebank tokenizer on the whole line
  (``preserve_line=True``), which differs from ``"nltk"`` only where a period ends a sentence inside the text.
- Words without a vector are dropped, markers included; a sentence left with no word becomes ``</s>``
  (``</p>``), as officially. If even that marker has no vector the sentence is one zero vector (the official
  code would fail).
"""

from __future__ import annotations

from collections.abc import Callable

from benchbox.errors import BenchboxError

TOKENIZERS = ("split", "nltk", "nltk-line")
MARKERS = {1: ("<s>", "</s>"), 2: ("<p>", "</p>")}


def make_tokenizer(mode: str, version: int) -> Callable[[str], list[str]]:
    """The tokenizer of ``mode`` for InferSent ``version``."""
    if mode == "split":
        return str.split
    if mode not in TOKENIZERS:
        raise BenchboxError(f"tokenize must be one of {', '.join(TOKENIZERS)}, got {mode!r}")
    try:
        from nltk.tokenize import word_tokenize
    except ImportError as exc:
        raise BenchboxError("tokenize=nltk needs NLTK: `pip install nltk`") from exc
    preserve_line = mode == "nltk-line"
    if not preserve_line:
        try:
            word_tokenize("A test. Another one.")
        except LookupError as exc:
            raise BenchboxError(
                "tokenize=nltk (InferSent's official tokenisation) needs NLTK's punkt_tab data: "
                "`python -m nltk.downloader punkt_tab`, or use tokenize=nltk-line (the same word tokenizer "
                "without sentence splitting, no data needed) or tokenize=split (SentEval's pre-tokenised text)"
            ) from exc

    def tokenize(sentence: str) -> list[str]:
        tokens = word_tokenize(sentence, preserve_line=preserve_line)
        if version == 2:  # the official "HACK to get ~MOSES tokenization"
            return " ".join(tokens).replace(" n't ", "n 't ").split()
        return tokens

    return tokenize


def sentence_rows(tokens: list[str], index: dict[str, int], version: int) -> list[int]:
    """Rows of the word vectors of a tokenised sentence with its markers; ``[-1]`` means one zero vector."""
    bos, eos = MARKERS[version]
    rows = [index[w] for w in [bos, *tokens, eos] if w in index]
    if rows:
        return rows
    return [index.get(eos, -1)]
