"""``benchbox neighbours``: the nearest captions of query sentences under several encoders, side by side
(Bordes et al. 2019, Table 3; :mod:`benchbox.neighbours`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import log, out, progress_bar, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import to_stdout, write_json
from benchbox.commands.options import (AT_LEAST_1, BATCH_SIZE, CACHE, CACHE_DIR, DATA_DIR, QUIET, THREADS,
                                       json_option)
from benchbox.threads import set_threads
from benchbox.storage.outdir import check_output_file


def read_queries(texts: list[str], files: list[Path]) -> list[str]:
    """Queries from --query and from --query-file (one per line, blank lines skipped), in that order."""
    queries = [t for t in texts]
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise BenchboxError(f"cannot read the query file {path}: {exc}") from exc
        queries += [line.strip() for line in lines if line.strip()]
    if any(not q.strip() for q in queries):
        raise BenchboxError("a --query is empty")
    return queries


def neighbours_command(
    encoders: Annotated[list[str], typer.Argument(help="Encoder names or trained-model run folders, shown side by side.")],
    corpus: Annotated[str, typer.Option(help="DATASET[:SPLIT] whose captions are searched: flickr8k or coco; split train (default), dev or test.")] = "flickr8k:train",
    query: Annotated[Optional[list[str]], typer.Option("--query", metavar="SENTENCE", help="A query sentence; repeatable.")] = None,
    query_file: Annotated[Optional[list[Path]], typer.Option(metavar="FILE", help="A file of queries, one per line; repeatable.")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours per query and encoder.", callback=AT_LEAST_1)] = 5,
    data_dir: DATA_DIR = None,
    cache_dir: CACHE_DIR = None,
    cache: CACHE = True,
    batch_size: BATCH_SIZE = 128,
    json_path: json_option("Write the neighbours as JSON (for `benchbox report --neighbours FILE`) instead of tables:") = None,
    threads: THREADS = None,
    quiet: QUIET = False,
) -> None:
    """Print each query's k nearest corpus captions (cosine) under every encoder, side by side."""
    from rich.table import Table
    from rich.text import Text

    from benchbox.storage.cache import EmbeddingCache
    from benchbox.data.root import DataRoot
    from benchbox.evaluation import load_encoder, make_embedder
    from benchbox.neighbours import load_corpus, neighbours

    set_quiet(quiet)
    set_threads(threads)
    results_to_stderr(to_stdout(json_path))
    check_output_file(json_path, "--json")
    queries = read_queries(query or [], query_file or [])
    if not queries:
        raise BenchboxError("no query: give --query TEXT or --query-file FILE")
    if k < 1:
        raise BenchboxError(f"-k must be at least 1, not {k}")
    sentences = load_corpus(DataRoot(data_dir), corpus)
    store = EmbeddingCache(cache_dir) if cache else None
    loaded = [(spec, load_encoder(spec)) for spec in encoders]
    names = [encoder.name for _, encoder in loaded]
    embedders = {}
    for spec, encoder in loaded:  # encoders of one name (e.g. two char-gru runs) are told apart by their spec
        label = encoder.name if names.count(encoder.name) == 1 else f"{encoder.name} ({spec})"
        if label in embedders:
            raise BenchboxError(f"{spec} is named twice")
        embedders[label] = make_embedder(encoder, store, batch_size=batch_size)
    log(f"corpus {corpus}: {len(sentences)} distinct captions; {len(queries)} queries; {len(embedders)} encoders")
    with progress_bar("encoding"):
        found = neighbours(embedders, queries, sentences, k=k, corpus_name=corpus)
    if json_path is not None:
        write_json(json_path, found.to_dict())
        return
    for query_text, per_encoder in zip(found.queries, found.results):
        table = Table(title=Text(f"“{query_text}” — {found.corpus} ({found.corpus_size} captions)"), show_lines=False)
        table.add_column("#", justify="right")
        for label in found.encoders:
            table.add_column(Text(label))
            table.add_column("cos", justify="right", no_wrap=True)
        for rank in range(found.k):
            row: list[Text | str] = [str(rank + 1)]
            for label in found.encoders:
                sentence, cosine, _ = per_encoder[label][rank]
                row += [Text(sentence), f"{cosine:.3f}"]
            table.add_row(*row)
        out.print(table)


def register(app: typer.Typer) -> None:
    app.command("neighbours")(neighbours_command)
