"""Data root resolution, embedded default, import, verify, and fetch against a local HTTP server."""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.data.root import EMBEDDED_ROOT, DataRoot, known_files, resolve_root
from benchbox.data.download import RemoteFile, fetch, remote_files
from benchbox.errors import BenchboxError

runner = CliRunner()


def test_root_resolution_order(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOX_DATA", str(tmp_path / "env"))
    assert resolve_root(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_root(None) == tmp_path / "env"
    monkeypatch.delenv("BENCHBOX_DATA")
    assert resolve_root(None).name == "benchbox"


def test_embedded_default_and_root_precedence(tmp_path):
    rel = "senteval/downstream/STS/STSBenchmark/sts-test.csv"
    root = DataRoot(tmp_path)
    assert root.locate(rel) == EMBEDDED_ROOT / rel
    assert root.label(root.locate(rel)) == f"embedded:{rel}"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text("x")
    assert root.locate(rel) == tmp_path / rel
    assert DataRoot(tmp_path / "none", use_embedded=False).locate(rel) is None


def test_embedded_files_carry_their_licences():
    assert (EMBEDDED_ROOT / "senteval/downstream/STS/STSBenchmark/LICENSE.txt").is_file()
    assert "Creative Commons" in (EMBEDDED_ROOT / "senteval/downstream/SICK/readme.txt").read_text(encoding="utf-8-sig")


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def http_root(tmp_path):
    """A static HTTP server on 127.0.0.1 serving ``tmp_path/www``."""
    www = tmp_path / "www"
    www.mkdir()
    handler = lambda *a, **kw: _Handler(*a, directory=str(www), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def test_fetch_verifies_and_installs(tmp_path, http_root):
    www, base = http_root
    _zip(www / "pack.zip", {"inner/a.txt": b"alpha", "inner/b.txt": b"beta"})
    targets = {"d/a.txt": hashlib.sha256(b"alpha").hexdigest(), "d/b.txt": hashlib.sha256(b"beta").hexdigest()}
    source = RemoteFile("demo", f"{base}/pack.zip", "zip", targets)
    written = fetch(source, tmp_path / "root", log=lambda m: None)
    assert sorted(p.name for p in written) == ["a.txt", "b.txt"]
    assert (tmp_path / "root/d/a.txt").read_bytes() == b"alpha"
    assert fetch(source, tmp_path / "root", log=lambda m: None) == []  # already verified: nothing to do


def test_fetch_rejects_a_changed_file_and_writes_nothing(tmp_path, http_root):
    www, base = http_root
    _zip(www / "pack.zip", {"a.txt": b"alpha", "b.txt": b"tampered"})
    targets = {"d/a.txt": hashlib.sha256(b"alpha").hexdigest(), "d/b.txt": hashlib.sha256(b"beta").hexdigest()}
    with pytest.raises(BenchboxError, match="differs from the release.*nothing was written"):
        fetch(RemoteFile("demo", f"{base}/pack.zip", "zip", targets), tmp_path / "root", log=lambda m: None)
    assert not (tmp_path / "root").exists()


def test_fetch_reports_http_errors_and_offline(tmp_path, http_root):
    _, base = http_root
    with pytest.raises(BenchboxError, match="HTTP 404"):
        fetch(RemoteFile("demo", f"{base}/missing.zip", "zip", {"x": "0"}), tmp_path, log=lambda m: None)
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(BenchboxError, match="looks offline"):
        fetch(RemoteFile("demo", f"http://127.0.0.1:{port}/x.zip", "zip", {"x": "0"}), tmp_path, log=lambda m: None)


def test_official_sources_cover_their_dataset_files():
    for name in ("flickr8k", "stsb-raw", "mr", "sst2", "trec", "mrpc"):
        provided = {p for s in remote_files(name) for p in s.targets}
        assert provided == {f.path for f in known_files()[name]}
    with pytest.raises(BenchboxError, match="benchbox data import"):
        remote_files("sts12")
    with pytest.raises(BenchboxError, match="unknown dataset"):
        remote_files("nope")


@pytest.mark.realdata
def test_fetch_flickr8k_through_a_mirror(tmp_path, http_root, data_root):
    """The official Flickr8k_text.zip layout, rebuilt from the real files and served on 127.0.0.1."""
    www, base = http_root
    members = {f"Flickr8k_text/{Path(f.path).name}": (data_root.root / f.path).read_bytes()
               for f in known_files()["flickr8k"]}
    _zip(www / "Flickr8k_text.zip", members)
    result = runner.invoke(app, ["data", "fetch", "flickr8k", "--data-dir", str(tmp_path / "root"), "--mirror", base])
    assert result.exit_code == 0, result.output
    assert "8 files written" in result.output
    verify = runner.invoke(app, ["data", "verify", "--data-dir", str(tmp_path / "root")])
    assert verify.exit_code == 0 and "0 mismatched" in verify.output


def test_import_senteval_folder_and_verify(tmp_path):
    senteval = tmp_path / "SentEval/data/downstream"
    (senteval / "STS/STSBenchmark").mkdir(parents=True)
    for name in ("sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        src = EMBEDDED_ROOT / "senteval/downstream/STS/STSBenchmark" / name
        (senteval / "STS/STSBenchmark" / name).write_bytes(src.read_bytes())
    (senteval / "STS/STSBenchmark/sts-dev.csv").write_text("edited\n")  # not the known release: skipped
    root = tmp_path / "root"
    result = runner.invoke(app, ["data", "import", str(senteval), "--data-dir", str(root)])
    assert result.exit_code == 0, result.output
    assert "imported 2 files" in result.output
    assert (root / "senteval/downstream/STS/STSBenchmark/sts-test.csv").is_file()
    assert not (root / "senteval/downstream/STS/STSBenchmark/sts-dev.csv").exists()
    (root / "senteval/downstream/STS/STSBenchmark/sts-test.csv").write_text("corrupted\n")
    verify = runner.invoke(app, ["data", "verify", "--data-dir", str(root)])
    assert verify.exit_code == 1 and "MISMATCH" in verify.output
    again = runner.invoke(app, ["data", "import", str(senteval), "--data-dir", str(root)])
    assert again.exit_code != 0 and "nothing was overwritten" in str(again.exception)
    assert (root / "senteval/downstream/STS/STSBenchmark/sts-test.csv").read_text() == "corrupted\n"


def test_status_lists_embedded_and_missing(tmp_path):
    result = runner.invoke(app, ["data", "status", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") > 3}
    assert "present" in lines["stsb"] and "embedded" in lines["stsb"]
    assert "missing" in lines["sts12"]
