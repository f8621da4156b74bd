"""Shared fixtures: the repository, the CLI binary the Rust suite built, scratch scenarios."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> Path:
    """The cclab binary (built by `cargo build --release -p cclab`, as the Rust suite does)."""
    exe = ROOT / "target" / "release" / "cclab"
    if not exe.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "cclab"], cwd=ROOT, check=True)
    return exe


def run_cli(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, check=check, cwd=ROOT)


SMALL = """\
name = "small"
description = "Two controllers over two loss rates, one second each."
duration = "1s"
seed = 3

[link]
rate = "20mbit"
rtt = "20ms"
buffer = "1bdp"
loss = [0, "1%"]

[[flows]]
cc = ["cubic", "bbr"]
"""


@pytest.fixture()
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def only_loopback() -> bool:
    """Whether this process sees no network interface but loopback (a namespace of its
    own), where a Ray cluster can listen on every interface and reach nothing."""
    import socket

    try:
        return [name for _, name in socket.if_nameindex()] == ["lo"]
    except OSError:
        return False
