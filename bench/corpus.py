"""Build a benchmark corpus: .py files from pinned PyPI releases.

    python bench/corpus.py [--set library|services|large] [--cache DIR]

Two sets of pins: `library` (the default: clients, frameworks and retry
libraries, in CACHE/corpus/) and `services` (applications built on them:
FastAPI, aiohttp, tornado, gRPC, Flask and Django servers, in
CACHE/services/corpus/), where deadline budgets actually live.

Each pinned release is fetched once with pip (library: sdist first, wheel if the
sdist download fails; services: the other way round), and only its .py files are unpacked into
CACHE/corpus/NAME-VERSION/. Files that `ast.parse` rejects under the running
Python (Python 2 leftovers in old test suites, deliberately broken fixtures)
are dropped right there, so every pass of the benchmark sees the same,
parseable files and can simply be pointed at the set's corpus folder.

Re-running is cheap: a release whose manifest exists is not touched again.
Standard library only.
"""

import argparse
import ast
import fnmatch
import json
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from pathlib import Path, PurePosixPath

# Exact pins, (name, version) or (name, version, keep) where keep lists the
# parts of a very large release that are kept (see kept()): changing this list
# changes the corpus, and so every figure.
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

# Services: applications, not libraries, so that the rules that need a budget in
# scope meet request handlers, middleware, outbound clients and background tasks
# as services write them. A mix of servers: FastAPI, aiohttp, tornado, gRPC,
# Flask and Django. Frontend assets are never kept (only .py files are).
SERVICES = [
    # FastAPI proxy in front of LLM APIs (httpx, timeouts, retries, fallbacks).
    # The release is 1.07M lines: keep the proxy server's request path, the
    # router and the httpx client everything calls through.
    ("litellm", "1.110.2", ("litellm/proxy/*.py", "litellm/proxy/pass_through_endpoints/",
                            "litellm/proxy/hooks/", "litellm/proxy/health_endpoints/",
                            "litellm/router.py", "litellm/router_utils/",
                            "litellm/llms/custom_httpx/")),
    ("open-webui", "0.12.4"),        # FastAPI + aiohttp/httpx/requests clients, socket.io
    ("mlserver", "1.7.1"),           # model server: FastAPI + grpc.aio
    # feature server: FastAPI, gRPC registry server, Arrow Flight offline server
    ("feast", "0.67.0", ("feast/*.py", "feast/infra/registry/",
                         "feast/infra/online_stores/remote.py",
                         "feast/infra/offline_stores/remote.py")),
    ("bentoml", "1.4.40"),           # model serving: Starlette HTTP + gRPC, httpx/aiohttp clients
    ("jupyter-server", "2.21.1"),    # tornado
    ("datasette", "0.65.5"),         # its own ASGI app, httpx
    ("label-studio", "1.23.2"),      # Django + DRF, requests
    # Flask tracking server and the FastAPI AI gateway (aiohttp clients)
    ("mlflow", "3.18.0", ("mlflow/server/", "mlflow/gateway/", "mlflow/deployments/",
                          "mlflow/utils/rest_utils.py", "mlflow/utils/request_utils.py")),
    ("gns3-server", "2.2.61"),       # aiohttp server (the 2.2 line; 3.x moved to FastAPI)
    # inference server: FastAPI + grpc.aio; the generated API models are left out
    ("kserve", "0.21.0", ("kserve/*.py", "kserve/protocol/", "kserve/utils/", "kserve/api/")),
]

# Large: the size of issue 31's tree (about 9,000 files): the library pins, django, openai
# and a pinned slice of home-assistant (its core and the integrations a-h; the last release
# that installs on Python 3.11). For the cache's warm and one-changed-file figures.
LARGE = PINNED + [
    ("django", "5.2.8"),
    ("openai", "1.109.1"),
    ("homeassistant", "2024.1.6", ("homeassistant/*.py", "homeassistant/helpers/", "homeassistant/util/",
                                   "homeassistant/auth/", "homeassistant/generated/", "homeassistant/backports/",
                                   *(f"homeassistant/components/{letter}*/" for letter in "abcdefgh"))),
]

SETS = {"library": PINNED, "services": SERVICES, "large": LARGE}
# Where each set lives under the cache: the library set keeps the original layout.
SET_FOLDERS = {"library": ".", "services": "services", "large": "large"}
# Sets fetched as wheels first: an application's sdist often builds its frontend
# (npm) just to report its metadata, and its wheel holds the .py files it ships.
WHEEL_FIRST = {"services"}
# Releases fetched as wheels first in any set (the large set's additions; its library pins are
# fetched as the library set fetches them, so they hold the same files).
WHEEL_FIRST_RELEASES = {"django", "openai", "homeassistant"}

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


SDIST, WHEEL = ["--no-binary", ":all:"], ["--only-binary", ":all:"]


def download(name: str, version: str, dest: Path, wheel_first: bool = False) -> Path:
    """Return the archive for name==version, downloading it if needed."""
    existing = [p for p in dest.glob("*") if p.is_file()] if dest.is_dir() else []
    if existing:
        return existing[0]
    tmp = dest.with_name(dest.name + ".tmp")
    for kind in (WHEEL, SDIST) if wheel_first else (SDIST, WHEEL):
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


def kept(rel: str, keep: tuple[str, ...]) -> bool:
    """Whether a release's file is in its `keep` list (empty: every file).

    An entry ending in "/" keeps that folder's whole tree (its name may be a glob:
    "pkg/plugins/a*/"); any other entry is a glob whose "*" stays within one folder
    ("pkg/proxy/*.py": the folder's own modules, not its subfolders')."""
    return not keep or any(
        _in_folder(rel, k) if k.endswith("/")
        else fnmatch.fnmatchcase(rel, k) and rel.count("/") == k.count("/")
        for k in keep)


def _in_folder(rel: str, folder: str) -> bool:
    if "*" not in folder:
        return rel.startswith(folder)
    depth = folder.count("/")
    parts = rel.split("/")
    return len(parts) > depth and fnmatch.fnmatchcase("/".join(parts[:depth]) + "/", folder)


def unpack(archive: Path, dest: Path, keep: tuple[str, ...] = ()) -> dict:
    """Unpack the parseable .py files of archive (those kept) into dest; return a manifest."""
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
        if not kept(rel, keep):
            continue
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
    return {"unpack_version": UNPACK_VERSION, "archive": archive.name, "keep": list(keep),
            "files": files, "lines": lines, "dropped": sorted(dropped)}


def set_root(cache: Path, set_name: str) -> Path:
    return cache / SET_FOLDERS[set_name]


def build(cache: Path = DEFAULT_CACHE, verbose: bool = True, set_name: str = "library") -> Path:
    """Make sure the set's corpus folder holds exactly its pinned releases; return it."""
    pins, root = SETS[set_name], set_root(cache, set_name)
    corpus, downloads, manifests = (root / d for d in ("corpus", "downloads", "manifests"))
    for d in (corpus, downloads, manifests):
        d.mkdir(parents=True, exist_ok=True)
    wanted = {f"{pin[0]}-{pin[1]}" for pin in pins}
    for d in (corpus, downloads, manifests):  # releases no longer pinned, leftovers
        for stale in d.iterdir():
            if stale.name.removesuffix(".json") not in wanted:
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    (corpus / "pyproject.toml").write_text(CORPUS_PYPROJECT)
    total_files = total_lines = total_dropped = 0
    for name, version, *rest in pins:
        keep = tuple(rest[0]) if rest else ()
        key = f"{name}-{version}"
        mpath = manifests / f"{key}.json"
        manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
        if (manifest.get("unpack_version") != UNPACK_VERSION or manifest.get("keep", []) != list(keep)
                or not (corpus / key).is_dir()):
            if verbose:
                print(f"preparing {name}=={version}", flush=True)
            archive = download(name, version, downloads / key,
                               set_name in WHEEL_FIRST or name in WHEEL_FIRST_RELEASES)
            manifest = unpack(archive, corpus / key, keep)
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


def dropped_count(cache: Path = DEFAULT_CACHE, set_name: str = "library") -> int:
    return sum(len(json.loads(p.read_text())["dropped"])
               for p in (set_root(cache, set_name) / "manifests").glob("*.json"))


def add_set_argument(ap: argparse.ArgumentParser) -> None:
    """The --set option, shared by the scripts that build or read a corpus."""
    ap.add_argument("--set", dest="set_name", choices=sorted(SETS), default="library",
                    help="which pinned corpus (default: library)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="cache directory (default: bench/.cache)")
    add_set_argument(ap)
    args = ap.parse_args()
    build(args.cache, set_name=args.set_name)
