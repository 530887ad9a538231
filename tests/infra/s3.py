"""S3 on loopback: moto's server in its own process, one bucket, the standard AWS env.

moto runs as ``python -m moto.server`` (not ``ThreadedMotoServer``) so that its request
handling never competes with the test for the GIL and its log is a file for failure messages.
It holds everything in memory: stopping it forgets every bucket.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.procs import LOOPBACK, ServerProcess, free_port

ACCESS_KEY = "testing"
SECRET_KEY = "testing"  # noqa: S105 - moto accepts any credentials
REGION = "us-east-1"


@dataclass
class S3Server:
    """A running moto S3 server with ``bucket`` created."""

    server: ServerProcess
    port: int
    bucket: str
    startup_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>`` (for ``AWS_ENDPOINT_URL`` / ``fs.s3a.endpoint``)."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def host_port(self) -> str:
        """``127.0.0.1:<port>`` (pyarrow's ``endpoint_override``, with ``scheme="http"``)."""
        return f"{LOOPBACK}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The standard variables every AWS SDK (boto3, pyarrow's C++ SDK, Hadoop's
        ``EnvironmentVariableCredentialsProvider``) reads."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            # pyarrow: no EC2 metadata probe (a 1 s+ timeout per client without it)
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def uri(self, *parts: str) -> str:
        return "s3://" + "/".join([self.bucket, *(p.strip("/") for p in parts)])

    def filesystem(self) -> Any:
        """A ``pyarrow.fs.S3FileSystem`` on this server (explicit, not from the env)."""
        from pyarrow import fs

        return fs.S3FileSystem(endpoint_override=self.host_port, scheme="http",
                               access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION)

    def client(self) -> Any:
        """A boto3 S3 client on this server."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def reset(self) -> None:
        """Empty the bucket (between tests that need a clean one)."""
        c = self.client()
        for page in c.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                c.delete_objects(Bucket=self.bucket, Delete={"Objects": keys})

    def stop(self) -> None:
        self.server.stop(grace=5)


def start_s3(log_dir: Path, *, bucket: str = "schemalab-test", timeout: float = 60) -> S3Server:
    port = free_port()
    # moto.server honours no AWS_* variables of ours; keep the child's env plain.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    server = ServerProcess("moto S3 server",
                           [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(port)],
                           Path(log_dir) / "moto.log", env=env)
    url = f"http://{LOOPBACK}:{port}"

    def ready() -> bool:
        # moto's own management API answers once the app is loaded
        with urllib.request.urlopen(f"{url}/moto-api/data.json", timeout=1) as r:
            return r.status == 200

    seconds = server.wait_ready(ready, timeout=timeout, what="answering HTTP")
    s3 = S3Server(server, port, bucket, seconds)
    try:
        s3.client().create_bucket(Bucket=bucket)
    except Exception as e:
        server.stop(grace=5)
        raise server.failure(f"could not create bucket {bucket!r}: {e}") from e
    return s3


def put_if_absent(client: Any, bucket: str, key: str, body: bytes) -> bool:
    """Create-only PUT (``If-None-Match: *``), as a Paimon commit needs on S3. True if this
    call created the object; False if it existed (HTTP 412 PreconditionFailed). A 409
    ConditionalRequestConflict (a concurrent conditional write in flight, on AWS) is raised
    for the caller to retry."""
    from botocore.exceptions import ClientError

    try:
        client.put_object(Bucket=bucket, Key=key, Body=body, IfNoneMatch="*")
        return True
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") == "PreconditionFailed":
            return False
        raise


def signed_request(method: str, url: str, body: bytes, headers: dict[str, str] | None = None,
                   *, access_key: str, secret_key: str, region: str, service: str = "s3",
                   now: Any = None) -> Any:
    """A ``urllib.request.Request`` signed with AWS Signature V4, standard library only: a
    conditional PUT (``If-None-Match: *``) needs no SDK at all. The payload is signed
    (``x-amz-content-sha256``), as botocore does over plain http; the path is used as given
    (S3 does not normalize it). For a URL path with characters outside RFC 3986's unreserved
    set, pass it percent-encoded."""
    import datetime as dt
    import hashlib
    import hmac
    import urllib.request
    from urllib.parse import parse_qsl, quote, urlsplit

    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    amz_date, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
    parts = urlsplit(url)
    payload_hash = hashlib.sha256(body).hexdigest()
    signed = {k.lower(): " ".join(str(v).split()) for k, v in (headers or {}).items()}
    signed.update({"host": parts.netloc, "x-amz-date": amz_date,
                   "x-amz-content-sha256": payload_hash})
    names = sorted(signed)
    query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
                     for k, v in sorted(parse_qsl(parts.query, keep_blank_values=True)))
    canonical = "\n".join([method, parts.path or "/", query,
                           "".join(f"{n}:{signed[n]}\n" for n in names), ";".join(names),
                           payload_hash])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = f"AWS4{secret_key}".encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out = {k: v for k, v in (headers or {}).items()}
    out.update({"x-amz-date": amz_date, "x-amz-content-sha256": payload_hash,
                "Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                 f"SignedHeaders={';'.join(names)}, Signature={signature}"})
    return urllib.request.Request(url, data=body, method=method, headers=out)
