"""Build the benchmark corpus: .py files from pinned PyPI releases.

    python bench/corpus.py [--cache DIR]

Each pinned release is fetched once with pip (sdist first, wheel if the sdist
download fails), and only its .py files are unpacked into
CACHE/corpus/NAME-VERSION/. Files that `ast.parse` rejects under the running
Python (Python 2 leftovers in old test suites, deliberately broken fixtures)
are dropped right there, so every pass of the benchmark sees the same,
parseable files and can simply be pointed at CACHE/corpus/.

Re-running is cheap: a release whose manifest exists is not touched again.
Standard library only.
"""

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from pathlib import Path, PurePosixPath

# Exact pins: changing this list changes the corpus, and so every figure.
# Service frameworks, HTTP/RPC/queue clients and retry libraries: the code
# deadline-lint is for. About 1.3M lines; the very large django, sqlalchemy,
# pymongo and elasticsearch releases were left out to keep a run short.
PINNED = [
    ("requests", "2.34.2"),
    ("urllib3", "2.8.0"),
    ("httpx", "0.28.1"),
    ("httpcore", "1.0.9"),
    ("aiohttp", "3.14.5"),
    ("tenacity", "9.2.1"),
    ("backoff", "2.2.1"),
    ("stamina", "26.1.0"),
    ("botocore", "1.44.8"),
    ("boto3", "1.44.8"),
    ("s3transfer", "0.19.3"),
    ("aiobotocore", "3.10.0"),
    ("google-api-core", "2.44.0"),
    ("grpcio-status", "1.85.3"),
    ("celery", "5.7.0"),
    ("kombu", "5.7.0"),
    ("starlette", "1.10.0"),
    ("fastapi", "0.165.0"),
    ("flask", "3.1.3"),
    ("werkzeug", "3.1.9"),
    ("redis", "8.1.0"),
    ("anyio", "4.16.0"),
    ("trio", "0.35.0"),
    ("tornado", "6.6.1"),
    ("gunicorn", "27.0.1"),
    ("uvicorn", "0.54.0"),
    ("psycopg", "3.3.9"),
    ("pika", "1.4.4"),
]

DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache"
# Bump when the unpacking rules below change: cached releases are then redone.
UNPACK_VERSION = 2

# Folders that linters (deadline-lint included) skip when walking a tree; files
# under them are left out so that every pass sees the same files.
SKIPPED_DIRS = {"build", "dist", "venv", "site-packages", "node_modules", "__pycache__"}

# Written at the corpus root so that a tool looking for its configuration in
# the nearest pyproject.toml stops here, not at the enclosing project's.
CORPUS_PYPROJECT = """\
# Written by bench/corpus.py: no tool configuration, so every tool checking
# this corpus runs on its defaults instead of the enclosing project's settings.
[project]
name = "deadline-lint-bench-corpus"
version = "0"
"""


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def parses(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for bad escapes etc.
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def download(name: str, version: str, dest: Path) -> Path:
    """Return the archive for name==version, downloading it if needed."""
    existing = [p for p in dest.glob("*") if p.is_file()] if dest.is_dir() else []
    if existing:
        return existing[0]
    tmp = dest.with_name(dest.name + ".tmp")
    for kind in (["--no-binary", ":all:"], ["--only-binary", ":all:"]):
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               *kind, f"{name}=={version}", "-d", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        files = [p for p in tmp.glob("*") if p.is_file()] if tmp.is_dir() else []
        if proc.returncode == 0 and len(files) == 1:
            shutil.rmtree(dest, ignore_errors=True)
            tmp.rename(dest)
            return dest / files[0].name
        print(f"  pip download {' '.join(kind)} failed for {name}=={version}:"
              f" {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    shutil.rmtree(tmp, ignore_errors=True)
    raise SystemExit(f"could not download {name}=={version}")


def py_members(archive: Path):
    """Yield (relative path, bytes) for every regular .py file in an archive."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir() and info.filename.endswith(".py"):
                    yield info.filename, zf.read(info), archive.suffix == ".zip"
    else:
        with tarfile.open(archive) as tf:
            for m in tf:
                if m.isfile() and m.name.endswith(".py"):
                    yield m.name, tf.extractfile(m).read(), True


def unpack(archive: Path, dest: Path) -> dict:
    """Unpack the parseable .py files of archive into dest; return a manifest."""
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    files = lines = 0
    dropped = []
    for name, data, has_top_dir in py_members(archive):
        parts = PurePosixPath(name).parts[1 if has_top_dir else 0:]
        if not parts or any(p in ("", ".", "..") for p in parts) or parts[0] == "/":
            continue
        if any(d.startswith(".") or d in SKIPPED_DIRS or d.endswith(".egg-info")
               for d in parts[:-1]):
            continue
        rel = "/".join(parts)
        if not parses(data):
            dropped.append(rel)
            continue
        target = tmp.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files += 1
        lines += count_lines(data)
    tmp.mkdir(parents=True, exist_ok=True)  # a release may have no .py at all
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return {"unpack_version": UNPACK_VERSION, "archive": archive.name,
            "files": files, "lines": lines, "dropped": sorted(dropped)}


def build(cache: Path = DEFAULT_CACHE, verbose: bool = True) -> Path:
    """Make sure CACHE/corpus holds exactly the pinned releases; return it."""
    corpus, downloads, manifests = (cache / d for d in ("corpus", "downloads", "manifests"))
    for d in (corpus, downloads, manifests):
        d.mkdir(parents=True, exist_ok=True)
    wanted = {f"{n}-{v}" for n, v in PINNED}
    for d in (corpus, downloads, manifests):  # releases no longer pinned, leftovers
        for stale in d.iterdir():
            if stale.name.removesuffix(".json") not in wanted:
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    (corpus / "pyproject.toml").write_text(CORPUS_PYPROJECT)
    total_files = total_lines = total_dropped = 0
    for name, version in PINNED:
        key = f"{name}-{version}"
        mpath = manifests / f"{key}.json"
        manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
        if manifest.get("unpack_version") != UNPACK_VERSION or not (corpus / key).is_dir():
            if verbose:
                print(f"preparing {name}=={version}", flush=True)
            archive = download(name, version, downloads / key)
            manifest = unpack(archive, corpus / key)
            mpath.write_text(json.dumps(manifest, indent=1) + "\n")
        total_files += manifest["files"]
        total_lines += manifest["lines"]
        total_dropped += len(manifest["dropped"])
        if verbose:
            print(f"  {key:32} {manifest['files']:6} files {manifest['lines']:9,} lines"
                  f"  ({manifest['archive']}, {len(manifest['dropped'])} dropped)")
    if verbose:
        print(f"corpus {corpus}: {total_files:,} files, {total_lines:,} lines, "
              f"{total_dropped} files dropped as unparseable by Python "
              f"{sys.version_info.major}.{sys.version_info.minor}")
    return corpus


def dropped_count(cache: Path = DEFAULT_CACHE) -> int:
    return sum(len(json.loads(p.read_text())["dropped"])
               for p in (cache / "manifests").glob("*.json"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="cache directory (default: bench/.cache)")
    build(ap.parse_args().cache)
