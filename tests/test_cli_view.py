"""``strandlab view`` and ``strandlab run --live`` on the command line: clear errors for bad input,
the URL printed, and a clean exit on Ctrl-C."""
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import viser  # noqa: F401  (the viewer extra, in the test extra)

from strandlab.cli import EXIT_USAGE, main


def test_view_missing_folder_and_files(tmp_path, capsys):
    assert main(["view", str(tmp_path / "nowhere")]) == EXIT_USAGE
    assert "nowhere does not exist" in capsys.readouterr().err
    assert main(["view", str(tmp_path)]) == EXIT_USAGE
    assert "has no trajectory.h5" in capsys.readouterr().err
    (tmp_path / "trajectory.h5").write_bytes(b"\x89HDF\r\n\x1a\n truncated")
    assert main(["view", str(tmp_path)]) == EXIT_USAGE
    assert "trajectory.h5" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["view", "runs/x", "--speed", "0"], "--speed: expected a positive number"),
    (["view", "runs/x", "--port", "70000"], "--port: expected a port 1..65535"),
    (["run", "no_such_scene", "--live"], "unknown scene 'no_such_scene'"),
    (["run", "hair", "--live", "--frames", "3", "--render"],
     "--live shows the run until stopped and writes nothing: --frames, --render"),
    (["run", "hair", "--live", "--solver", "nope"], "unknown solver 'nope'"),
])
def test_bad_viewer_options(argv, message, capsys):
    assert main(argv) == EXIT_USAGE
    assert message in capsys.readouterr().err


def _as_from_a_terminal():
    """In the child before exec: SIGINT at its default disposition and not blocked, as a shell
    starts a command.  A pytest worker's history can leave it ignored or blocked (a child then
    inherits that, and Python keeps an inherited ignored SIGINT): measured on a fresh
    clone's first run, the viewer never saw the Ctrl-C and its main thread stayed in its wait
    loop."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def test_view_prints_the_url_and_stops_on_ctrl_c(tmp_path):
    from helpers import saved_run

    saved_run(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen([sys.executable, "-m", "strandlab.cli", "view", str(tmp_path),
                          "--port", str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env,
                         preexec_fn=_as_from_a_terminal)
    try:
        line = p.stdout.readline()
        assert line.startswith(f"viewer: http://127.0.0.1:{port}")
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 0
    assert "viewer: stopped" in out and "Traceback" not in out
