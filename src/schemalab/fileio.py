"""One file-system layer under all metadata I/O, for local disk and object stores.

Paths are strings: a local path (``/w/db.db/t/schema/schema-0``) or a URI of a store that
``pyarrow.fs`` reaches (``s3://bucket/w/...``, ``gs://``, ``abfs://``, ``hdfs://``).
``s3a://`` and ``s3n://`` name the same objects as ``s3://`` and ``file://`` a local path, so
:func:`normalize` folds them. Every function here takes such a string; joining with
``os.path.join`` works for both kinds (POSIX separators).

Stores are configured from the standard environment (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ...) or, per bucket, from
Paimon's catalog option names given to :func:`configure` (``s3.endpoint``,
``s3.access-key``, ``s3.secret-key``, ``s3.region``, ``s3.path.style.access``).

Paimon commits metadata with "create if absent": of two writers of ``schema-5`` exactly one
succeeds, and a loser never overwrites the winner. On local disk the bytes go to a hidden
temporary file in the same directory, are flushed, and are hard-linked to the final name
(``link`` fails if the name exists). On S3 the object is written with a conditional PUT
(``If-None-Match: *``), which boto3 sends (pyarrow cannot): install ``schemalab[s3]``. A
store with no such primitive here (GCS, ADLS, HDFS) is refused for writes with a clear
error; reading and inspecting its tables works.

    >>> normalize("s3a://bucket/wh/"), normalize("file:///tmp/wh"), normalize("file:/tmp/wh")
    ('s3://bucket/wh', '/tmp/wh', '/tmp/wh')
    >>> scheme("s3://bucket/wh"), scheme("/tmp/wh")
    ('s3', 'file')
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.errors import CorruptFileError, SchemaLabError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow.fs as pafs

#: schemes read through pyarrow.fs; ``s3a``/``s3n`` are folded into ``s3``
REMOTE_SCHEMES = ("s3", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs"}


class StoreError(SchemaLabError):
    """A store that cannot do what was asked (no atomic create, no credentials, ...)."""


# --------------------------------------------------------------------------------------------
# Paths and URIs
# --------------------------------------------------------------------------------------------


def scheme(path: str) -> str:
    """``"file"`` for a local path, else the URI's scheme (``s3a`` reported as ``s3``)."""
    m = _SCHEME.match(path)
    if m is None:
        return "file"
    s = m.group(1).lower()
    return _ALIASES.get(s, s)


def is_local(path: str) -> bool:
    return scheme(path) == "file"


def normalize(path: str | os.PathLike[str]) -> str:
    """A path as schemalab keeps it: local paths absolute, ``file://`` URIs as local paths,
    ``s3a://``/``s3n://`` as ``s3://``, no trailing ``/``."""
    p = os.fspath(path)
    if p.startswith("file:"):
        # file:///a/b, file:/a/b (Hadoop's form), file://host/a/b
        rest = p[len("file:"):]
        if rest.startswith("//"):
            rest = "/" + rest[2:].split("/", 1)[-1] if not rest.startswith("///") else rest[2:]
        return os.path.abspath(rest)
    m = _SCHEME.match(p)
    if m is None:
        return os.path.abspath(p)
    s = m.group(1).lower()
    return f"{_ALIASES.get(s, s)}://{p[m.end():].rstrip('/')}"


def spark_uri(path: str) -> str:
    """The URI Spark's Hadoop file systems read ``path`` by: ``s3a://`` for S3, the local path
    as it is."""
    if scheme(path) == "s3":
        return "s3a://" + path.split("://", 1)[1]
    return path


def display(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it lies below it, for messages and trees."""
    root = root.rstrip("/")
    if path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


# --------------------------------------------------------------------------------------------
# Stores
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Store:
    """A remote store's pyarrow file system, and how it commits."""

    fs: pafs.FileSystem
    scheme: str
    options: tuple[tuple[str, str], ...] = ()


_stores: dict[str, Store] = {}
_options: dict[str, dict[str, str]] = {}
_lock = threading.Lock()


def _authority(path: str) -> str:
    """``s3://bucket`` of ``s3://bucket/key``: stores are configured per bucket."""
    s = scheme(path)
    rest = path.split("://", 1)[1]
    return f"{s}://{rest.split('/', 1)[0]}"


def configure(path: str, options: Mapping[str, str] | None) -> None:
    """Use ``options`` (Paimon's catalog option names) for the store ``path`` lives in. Local
    paths take none."""
    if not options or is_local(path):
        return
    with _lock:
        auth = _authority(normalize(path))
        _options[auth] = {**_options.get(auth, {}), **{str(k): str(v)
                                                        for k, v in options.items()}}
        _stores.pop(auth, None)


def _store(path: str) -> tuple[Store, str]:
    """The store of a remote path and the path within it (``bucket/key`` for S3)."""
    auth = _authority(path)
    with _lock:
        store = _stores.get(auth)
        if store is None:
            store = _stores[auth] = _make_store(scheme(path), _options.get(auth, {}))
    return store, path.split("://", 1)[1]


def _make_store(s: str, options: Mapping[str, str]) -> Store:
    from pyarrow import fs as pafs

    if s == "s3":
        kwargs: dict[str, Any] = {}
        endpoint = options.get("s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") \
            or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            m = _SCHEME.match(endpoint)
            kwargs["endpoint_override"] = endpoint[m.end():] if m else endpoint
            if m is not None:
                kwargs["scheme"] = m.group(1).lower()
        for key, arg in (("s3.access-key", "access_key"), ("s3.secret-key", "secret_key"),
                         ("s3.session-token", "session_token"), ("s3.region", "region")):
            if options.get(key):
                kwargs[arg] = options[key]
        if str(options.get("s3.path.style.access", "")).lower() == "true":
            kwargs["force_virtual_addressing"] = False
        return Store(pafs.S3FileSystem(**kwargs), "s3", tuple(sorted(options.items())))
    try:
        filesystem, _ = pafs.FileSystem.from_uri(f"{s}://x")
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds
        raise StoreError(f"Cannot open a {s}:// store with pyarrow: {e}",
                         rule="store-unavailable") from None
    return Store(filesystem, s, tuple(sorted(options.items())))


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def read_bytes(path: str) -> bytes:
    """The whole file. FileNotFoundError when it is not there."""
    if is_local(path):
        with open(path, "rb") as fh:
            return fh.read()
    store, p = _store(path)
    try:
        with store.fs.open_input_stream(p) as fh:
            return fh.read()
    except FileNotFoundError:
        raise
    except OSError as e:
        if "not found" in str(e).lower() or "does not exist" in str(e).lower():
            raise FileNotFoundError(path) from None
        raise


#: concurrent reads of small files on a remote store (each is one request's latency)
REMOTE_READERS = 16


def prefetch(paths: list[str]) -> dict[str, bytes]:
    """The bytes of many small files at once: concurrently on a remote store (where each
    read is a request and its latency adds up), one after the other on local disk. A missing
    file is left out."""
    def read(p: str) -> tuple[str, bytes | None]:
        try:
            return p, read_bytes(p)
        except FileNotFoundError:
            return p, None

    if len(paths) < 2 or all(is_local(p) for p in paths):
        pairs = [read(p) for p in paths]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=REMOTE_READERS) as pool:
            pairs = list(pool.map(read, paths))
    return {p: b for p, b in pairs if b is not None}


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A remote path's pyarrow file system, and the path within it (``bucket/key``)."""
    store, p = _store(path)
    return store.fs, p


def _info(path: str) -> Any:
    from pyarrow import fs as pafs

    store, p = _store(path)
    info = store.fs.get_file_info(p)
    return None if info.type == pafs.FileType.NotFound else info


def exists(path: str) -> bool:
    return os.path.exists(path) if is_local(path) else _info(path) is not None


def _is(path: str, kind: str) -> bool:
    info = _info(path)
    return info is not None and info.type.name == kind


def is_dir(path: str) -> bool:
    return os.path.isdir(path) if is_local(path) else _is(path, "Directory")


def is_file(path: str) -> bool:
    return os.path.isfile(path) if is_local(path) else _is(path, "File")


def size(path: str) -> int:
    """The file's size in bytes. FileNotFoundError when it is not there."""
    if is_local(path):
        return os.path.getsize(path)
    info = _info(path)
    if info is None:
        raise FileNotFoundError(path)
    return int(info.size)


def mtime(path: str) -> float:
    """The modification time, seconds since the epoch; for a directory of an object store
    (a key prefix, which has none) the newest of its files'."""
    if is_local(path):
        return os.path.getmtime(path)
    from pyarrow import fs as pafs

    info = _info(path)
    if info is None:
        raise FileNotFoundError(path)
    if info.type == pafs.FileType.Directory:
        store, p = _store(path)
        times = [i.mtime.timestamp() for i in store.fs.get_file_info(
            pafs.FileSelector(p, recursive=True)) if i.mtime is not None]
        return max(times, default=0.0)
    return info.mtime.timestamp() if info.mtime is not None else 0.0


def list_names(directory: str) -> list[str]:
    """The names directly in ``directory`` (files and directories); [] when it is missing."""
    if is_local(directory):
        try:
            return os.listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
    from pyarrow import fs as pafs

    store, p = _store(directory)
    try:
        infos = store.fs.get_file_info(pafs.FileSelector(p, allow_not_found=True))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [i.base_name for i in infos]


def walk(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` for any store: (directory, subdirectory names, file names), top down; as
    with ``os.walk``, removing a name from the subdirectories prunes it."""
    if is_local(top):
        yield from os.walk(top)
        return
    from pyarrow import fs as pafs

    store, p = _store(top)
    prefix = top.split("://", 1)[0] + "://"
    try:
        infos = store.fs.get_file_info(pafs.FileSelector(p, allow_not_found=True))
    except (FileNotFoundError, NotADirectoryError):
        return
    dirs = sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)
    files = sorted(i.base_name for i in infos if i.type != pafs.FileType.Directory)
    yield top, dirs, files
    for d in dirs:
        yield from walk(prefix + p.rstrip("/") + "/" + d)


def list_versions(directory: str, prefix: str) -> list[int]:
    """The ids N of files named ``<prefix>N`` in ``directory``, ascending."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)$")
    return sorted(int(m.group(1)) for n in list_names(directory) if (m := pattern.match(n)))


def open_input(path: str) -> Any:
    """A readable, seekable file for pyarrow's Parquet/ORC readers."""
    if is_local(path):
        return path
    store, p = _store(path)
    return store.fs.open_input_file(p)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _payload(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _tmp_path(path: str) -> str:
    d, name = os.path.split(path)
    return os.path.join(d, f".{name}.{uuid.uuid4().hex}.tmp")


def _write_tmp(path: str, data: bytes) -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = _tmp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_new(path: str, data: bytes | str) -> bool:
    """Create ``path`` with ``data`` atomically, only if it does not exist. Returns False
    (and leaves nothing behind) when another writer got there first."""
    payload = _payload(data)
    if not is_local(path):
        return _put_if_absent(path, payload)
    tmp = _write_tmp(path, payload)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write_replace(path: str, data: bytes | str) -> None:
    """Replace ``path`` atomically (hint files such as ``LATEST``)."""
    payload = _payload(data)
    before_change(path)
    if not is_local(path):
        check_writable(path)
        store, p = _store(path)
        with store.fs.open_output_stream(p) as fh:
            fh.write(payload)
        return
    tmp = _write_tmp(path, payload)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: called with a file's or directory's path before fileio removes or replaces it (see
#: schemalab.checkpoint, which keeps what a checkpoint still lists)
change_guards: list[Callable[[str], None]] = []


def before_change(path: str) -> None:
    for guard in list(change_guards):
        guard(path)


def makedirs(path: str) -> None:
    """Create a directory and its parents; object stores have none to create."""
    if is_local(path):
        os.makedirs(path, exist_ok=True)


def delete(path: str) -> None:
    """Remove a file; a missing one is no error."""
    before_change(path)
    if is_local(path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    store, p = _store(path)
    with contextlib.suppress(FileNotFoundError):
        store.fs.delete_file(p)


def delete_dir(path: str) -> None:
    """Remove a directory and everything below it; a missing one is no error."""
    before_change(path)
    if is_local(path):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        return
    store, p = _store(path)
    with contextlib.suppress(FileNotFoundError, OSError):
        store.fs.delete_dir(p)


def move(src: str, dst: str) -> None:
    """Move a file to a new name in the same store (a copy and a delete on object stores)."""
    before_change(src)
    if is_local(src):
        os.rename(src, dst)
        return
    store, p = _store(src)
    _, q = _store(dst)
    store.fs.move(p, q)


# --------------------------------------------------------------------------------------------
# Create-if-absent on object stores
# --------------------------------------------------------------------------------------------


def check_writable(path: str) -> None:
    """Refuse, with what to do, a store schemalab cannot commit to atomically."""
    s = scheme(path)
    if s == "file":
        return
    if s != "s3":
        raise StoreError(
            f"Cannot write to {path}: committing a Paimon table needs an atomic "
            f"create-if-absent, which schemalab does only on local disk and S3 (conditional "
            f"PUT). Tables on {s}:// can be read and inspected.", rule="atomic-commit")
    try:
        import boto3  # noqa: F401
    except ImportError:
        raise StoreError(
            f"Cannot write to {path}: committing on S3 needs a conditional PUT "
            "(If-None-Match: *), which pyarrow cannot send. Install boto3: "
            "pip install 'schemalab[s3]'. Reading and inspecting work without it.",
            rule="atomic-commit") from None


_clients: dict[str, Any] = {}


def s3_client(path: str) -> Any:
    """The boto3 client of the S3 bucket ``path`` lies in, configured as its store."""
    import boto3

    auth = _authority(path)
    with _lock:
        client = _clients.get(auth)
        if client is None:
            options = _options.get(auth, {})
            kwargs: dict[str, Any] = {}
            endpoint = options.get("s3.endpoint")
            if endpoint:
                kwargs["endpoint_url"] = endpoint if _SCHEME.match(endpoint) \
                    else f"https://{endpoint}"
            if options.get("s3.access-key"):
                kwargs["aws_access_key_id"] = options["s3.access-key"]
                kwargs["aws_secret_access_key"] = options.get("s3.secret-key")
            if options.get("s3.region"):
                kwargs["region_name"] = options["s3.region"]
            if str(options.get("s3.path.style.access", "")).lower() == "true":
                from botocore.config import Config

                kwargs["config"] = Config(s3={"addressing_style": "path"})
            client = _clients[auth] = boto3.client("s3", **kwargs)
    return client


def _put_if_absent(path: str, payload: bytes) -> bool:
    check_writable(path)
    from botocore.exceptions import ClientError

    bucket, _, key = path.split("://", 1)[1].partition("/")
    try:
        s3_client(path).put_object(Bucket=bucket, Key=key, Body=payload, IfNoneMatch="*")
    except ClientError as e:
        code = str(e.response.get("Error", {}).get("Code", ""))
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        # 412: the object exists; 409: a concurrent conditional write to the same key
        if status in (409, 412) or code in ("PreconditionFailed", "ConditionalRequestConflict"):
            return False
        raise
    return True


# --------------------------------------------------------------------------------------------
# Data files and Avro containers
# --------------------------------------------------------------------------------------------

PARQUET_MAGIC = b"PAR1"


def check_data_file(path: str, expected_size: int | None, *, table: str | None = None) -> None:
    """Refuse a data file a manifest names that is missing, of another size than the
    manifest recorded, or not Parquet (no ``PAR1`` at both ends): a clear error naming the
    file now, rather than a Spark stack trace when the read runs."""
    where = f" (table {table})" if table else ""
    try:
        n = size(path)
    except FileNotFoundError:
        raise CorruptFileError(path, f"data file does not exist, but a manifest of the "
                               f"snapshot names it{where}", table=table) from None
    if expected_size and n != expected_size:
        raise CorruptFileError(path, f"data file is {n} bytes, but its manifest entry "
                               f"says {expected_size}: truncated or overwritten{where}",
                               table=table)
    if not path.endswith(".parquet"):
        return  # ORC/Avro data files (Java Paimon) are left to their readers
    try:
        with open(path, "rb") if is_local(path) else open_input(path) as fh:
            head = fh.read(4)
            fh.seek(max(0, n - 4))
            tail = fh.read(4)
    except OSError as e:
        raise CorruptFileError(path, f"data file cannot be read ({e}){where}",
                               table=table) from None
    if n < 12 or head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
        raise CorruptFileError(path, f"not a Parquet file (no 'PAR1' magic at both ends)"
                               f"{where}", table=table)


AVRO_MAGIC = b"Obj\x01"


@dataclass(frozen=True)
class AvroFile:
    """An Avro container file: its writer schema, its metadata (decoded as text) and its
    records."""

    schema: Any
    metadata: dict[str, str]
    records: list[dict[str, Any]]


def read_avro(path: str, *, missing: str = "file does not exist") -> AvroFile:
    """Every record of the Avro container file at ``path`` (manifests of both formats);
    CorruptFileError naming the file for anything unreadable, ``missing`` when it is not
    there."""
    import fastavro

    try:
        data = read_bytes(path)
    except FileNotFoundError:
        raise CorruptFileError(path, missing) from None
    except OSError as e:
        raise CorruptFileError(path, f"cannot be read ({e})") from None
    if not data.startswith(AVRO_MAGIC):
        raise CorruptFileError(path, "not an Avro container file (no 'Obj\\x01' magic)")
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)
    except Exception as e:  # noqa: BLE001 - fastavro and the codecs raise many kinds
        raise CorruptFileError(path, f"unreadable Avro ({type(e).__name__}: {e})") from None
    if not all(isinstance(r, dict) for r in records):
        raise CorruptFileError(path, "Avro records are not records")
    meta = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
            for k, v in reader.metadata.items()}
    return AvroFile(reader.writer_schema, meta, records)  # type: ignore[arg-type]
