"""``strandlab view --host H``: an address the server cannot listen on is refused before the
server starts (viser would wait forever), with exit status 2 and one line naming HOST:PORT;
nothing is left listening."""
import socket
import subprocess
import sys
import threading

import pytest

from helpers import saved_run
from strandlab.cli import EXIT_USAGE
from strandlab.render.viewer import check_address


@pytest.fixture
def run_dir(tmp_path):
    return saved_run(tmp_path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("host", [
    "999.1.1.1",                         # not an address, not a name
    "192.0.2.1",                         # TEST-NET-1: an address of no machine here
])
def test_view_refuses_a_host_it_cannot_serve_on(run_dir, host):
    port = _free_port()
    p = subprocess.run([sys.executable, "-m", "strandlab.cli", "view", str(run_dir), "--host",
                        host, "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert p.returncode == EXIT_USAGE
    assert p.stderr.startswith(f"strandlab: error: cannot serve on {host}:{port} (")
    assert p.stderr.count("\n") == 1 and p.stdout == ""


def test_a_local_address_passes_and_the_check_leaves_nothing_listening():
    threads = threading.active_count()
    port = _free_port()
    check_address("127.0.0.1", port)
    check_address("localhost", port)
    assert threading.active_count() == threads
    with socket.socket() as s:                                 # the port is free again
        s.bind(("127.0.0.1", port))


def test_a_port_in_use_passes_the_check():
    with socket.socket() as s:             # the server takes the next free port (docs/viewer.md)
        s.bind(("127.0.0.1", 0))
        s.listen()
        check_address("127.0.0.1", s.getsockname()[1])
    with pytest.raises(ValueError, match=r"cannot serve on 192\.0\.2\.1:8080 \("):
        check_address("192.0.2.1", 8080)
