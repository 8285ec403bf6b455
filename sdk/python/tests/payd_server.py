"""Starts a real payd for the tests: the binary from PAYD_BIN, or one built
with ``go build`` from this repository; SQLite in a temporary directory, a
free port, and a merchant made with ``payd merchant create --json``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from typing import List, Optional

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningPayd:
    url: str
    secret_keys: List[str]
    publishable_key: str
    merchant_id: str
    proc: subprocess.Popen  # type: ignore[type-arg]
    dir: str
    log: str = field(default="")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_payd(name: str = "Python SDK test") -> RunningPayd:
    d = tempfile.mkdtemp(prefix="payd-py-")
    binary: Optional[str] = os.environ.get("PAYD_BIN")
    if not binary:
        binary = os.path.join(d, "payd")
        subprocess.run(["go", "build", "-o", binary, "./cmd/payd"], cwd=REPO_ROOT, check=True)
    port = free_port()
    env = dict(os.environ)
    env.update(
        PAYD_DATABASE_URL="sqlite:" + os.path.join(d, "payd.db"),
        PAYD_ADDR=f"127.0.0.1:{port}",
        PAYD_PUBLIC_URL=f"http://127.0.0.1:{port}",
        PAYD_DEMO="false",
        PAYD_RATE_LIMIT="0",
        PAYD_SANDBOX_PUSH_DELAY="100ms",
        PAYD_SANDBOX_TIMEOUT_DELAY="100ms",
        PAYD_WEBHOOK_RETRY_SCHEDULE="100ms,200ms,400ms",
    )
    subprocess.run([binary, "migrate"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(
        [binary, "merchant", "create", "--name", name, "--json"], env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ).stdout
    created = json.loads(out)
    log_path = os.path.join(d, "serve.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=log)
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"payd serve exited {proc.returncode}: {open(log_path).read()}")
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"payd did not become ready: {open(log_path).read()}")
        time.sleep(0.1)
    return RunningPayd(
        url=url,
        secret_keys=created["secret_keys"],
        publishable_key=created["publishable_key"],
        merchant_id=created["merchant_id"],
        proc=proc,
        dir=d,
        log=log_path,
    )
