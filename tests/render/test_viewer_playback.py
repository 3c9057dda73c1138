"""Playback of a saved run in the viewer: which frame is shown as wall time passes, at a speed,
after scrubbing, at the end of the run, looping; and the run folders the viewer refuses."""
import numpy as np
import pytest

from strandlab.render.playback import Playback

TIMES = np.array([0.0, 0.1, 0.2, 0.3])


def test_frame_follows_wall_time_times_speed():
    pb = Playback(TIMES)
    assert pb.advance(0.5) == 0                     # paused: nothing moves
    pb.play()
    assert pb.advance(0.15) == 1                    # t = 0.15 s: frame 1 (0.1 <= t < 0.2)
    assert pb.time == pytest.approx(0.15)
    pb.set_speed(2.0)
    assert pb.advance(0.03) == 2                    # + 0.06 s of simulated time: t = 0.21 s
    assert pb.time == pytest.approx(0.21)
    pb.set_speed(0.25)
    assert pb.advance(0.2) == 2                     # + 0.05 s: t = 0.26 s
    assert pb.time == pytest.approx(0.26)


def test_end_of_run_stops_on_the_last_frame_and_play_restarts():
    pb = Playback(TIMES)
    pb.play()
    assert pb.advance(5.0) == 3
    assert not pb.playing and pb.at_end and pb.time == pytest.approx(0.3)
    assert pb.advance(1.0) == 3
    pb.play()                                       # at the end: from the first frame again
    assert pb.playing and pb.frame == 0 and pb.time == 0.0


def test_loop_wraps_to_the_first_frame():
    pb = Playback(TIMES, loop=True)
    pb.play()
    assert pb.advance(0.35) == 0                    # 0.05 s past the end: t = 0.05 s
    assert pb.playing and pb.time == pytest.approx(0.05)
    assert pb.advance(0.2) == 2


def test_scrub_clips_and_counts_from_the_end():
    pb = Playback(TIMES)
    assert pb.scrub(2) == 2 and pb.frame == 2 and pb.time == pytest.approx(0.2)
    assert pb.scrub(-1) == 3
    assert pb.scrub(99) == 3
    assert pb.scrub(-99) == 0
    pb.scrub(1)
    pb.play()
    assert pb.advance(0.1) == 2                     # playing goes on from the scrubbed frame
    with pytest.raises(TypeError, match="integer"):
        pb.scrub(1.5)


def test_single_frame_run_and_repeated_times():
    pb = Playback([0.0])
    pb.play()
    assert pb.advance(1.0) == 0 and not pb.playing
    pb = Playback([0.0, 0.1, 0.1, 0.2])             # a repeated time shows the later frame
    assert pb.scrub(1) == 1 and pb.frame == 2


@pytest.mark.parametrize("speed", [0, -1, float("nan"), float("inf"), "fast", True])
def test_bad_speed_is_refused(speed):
    with pytest.raises(ValueError, match="speed must be a positive number"):
        Playback(TIMES, speed=speed)
    pb = Playback(TIMES)
    with pytest.raises(ValueError, match="speed"):
        pb.set_speed(speed)


@pytest.mark.parametrize("times, match", [([], "non-empty"), ([0.0, 0.2, 0.1], "non-decreasing"),
                                          ([0.0, np.nan], "finite")])
def test_bad_times_are_refused(times, match):
    with pytest.raises(ValueError, match=match):
        Playback(times)


def test_open_run_names_what_is_missing(tmp_path):
    from strandlab.render.viewer import open_run

    with pytest.raises(FileNotFoundError, match="nowhere.*does not exist"):
        open_run(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="has no trajectory.h5"):
        open_run(tmp_path)
    (tmp_path / "trajectory.h5").write_bytes(b"not hdf5 at all")
    with pytest.raises(ValueError, match="trajectory.h5"):
        open_run(tmp_path)


def test_close_stops_the_playback_thread_before_the_file(tmp_path, monkeypatch):
    # Ctrl-C while a frame is drawn: the file closes only after the playback thread has
    # finished it and stopped (a file closed under a read left the process hanging at exit)
    import socket
    import threading
    import time

    import viser  # noqa: F401  (the viewer extra, in the test extra)

    from strandlab.io.trajectory import Trajectory, save_trajectory
    from strandlab.render import viewer as V

    pos = np.zeros((40, 3, 3))
    pos[:, :, 0] = [0.0, 0.1, 0.2]
    traj = Trajectory(times=np.arange(40) / 30.0, positions=pos,
                      d1=np.tile([0.0, 1.0, 0.0], (40, 2, 1)), strand_offsets=[0, 3],
                      edge_offsets=[0, 2], closed=[False], radii=[0.01],
                      extra_points=np.zeros((40, 0, 3)), extra_triangles=np.zeros((0, 3)))
    save_trajectory(tmp_path / "trajectory.h5", traj)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    drawing, order = threading.Event(), []
    show = V.PlaybackViewer.show

    def slow_show(self, k):
        drawing.set()
        time.sleep(0.3)
        show(self, k)
        order.append("shown")

    monkeypatch.setattr(V.PlaybackViewer, "show", slow_show)
    viewer = V.view_run(tmp_path, port=port)
    close_file = V._close
    monkeypatch.setattr(V, "_close", lambda t: (order.append("file closed"), close_file(t)))
    assert drawing.wait(5.0)
    viewer.close()
    assert not viewer._thread.is_alive()
    assert order[-2:] == ["shown", "file closed"]
