"""The interactive viewer: a web page served by viser, for saved runs and live simulations.

- :func:`view_run` plays back the trajectory of a run folder (play, pause, scrub, speed, loop);
  frames are read lazily from ``trajectory.h5`` as they are shown.
- :func:`view_live` runs a :class:`~strandlab.sim.runner.Simulation` while it is watched
  (:class:`~strandlab.render.live.LiveSimulation`): gravity, stiffness and every setting of the
  scene's solver, pause, step, reset, and dragging a vertex with the mouse.  The simulation
  steps in its own thread; the page's callbacks only queue requests, so the page never waits
  for a step, and a step never waits for the page.

Both return a :class:`Viewer` (``url``, ``server``, ``close()``); :func:`serve` prints the URL
and blocks until Ctrl-C.  viser (the ``viewer`` extra) is imported only here, when a viewer is
made.  What is drawn: :mod:`strandlab.render.viewer_scene`.
"""
from __future__ import annotations

import contextlib
import errno
import io
import math
import socket
import sys
import threading
import time as _time

import numpy as np

from .live import LiveSimulation, SettingField, Snapshot, parse_setting, settings_fields
from .playback import Playback
from .viewer_scene import SceneLayout, SceneView, nearest_vertex

__all__ = ["Viewer", "PlaybackViewer", "LiveViewer", "view_run", "view_live", "serve",
           "open_run", "ViewerUnavailable", "DEFAULT_PORT"]

DEFAULT_PORT = 8080
_TICK = 1.0 / 30.0          # playback page updates per second
_STATUS_EVERY = 0.2         # seconds between status line updates
_JOIN = 5.0                 # seconds to wait for the playback thread at close


class ViewerUnavailable(ImportError):
    """viser is not installed (the ``viewer`` extra)."""


def _viser():
    try:
        import viser
    except ImportError as exc:
        raise ViewerUnavailable("the interactive viewer needs viser: pip install "
                                "'strandlab[viewer]'") from exc
    return viser


def open_run(path):
    """The trajectory of run folder ``path`` (``trajectory.h5``, or ``trajectory.npz`` of
    earlier versions) or of a trajectory file, opened for lazy reading
    (:func:`strandlab.io.interchange.open_run`): FileNotFoundError naming what is missing,
    ValueError for an unreadable file or a run without frames."""
    from ..io.interchange import open_run as _open

    traj = _open(path)
    if traj.n_frames == 0:
        _close(traj)
        raise ValueError(f"run {path} holds no frames")
    return traj


def _close(traj) -> None:
    close = getattr(traj, "close", None)
    if close is not None:
        close()


def check_address(host: str, port: int) -> None:
    """ValueError ``cannot serve on HOST:PORT (...)`` unless a server can listen on ``host``
    (a name or an address of this machine) at ``port``: checked by binding a socket there and
    closing it, before the server starts (viser waits forever on an address it cannot bind).
    A port in use passes: the server then takes the next free one."""
    where = f"{host}:{port}"
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise ValueError(f"cannot serve on {where} ({getattr(exc, 'strerror', None) or exc})"
                         ) from None
    try:
        with socket.socket(family, kind, proto) as s:
            s.bind(addr)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise ValueError(f"cannot serve on {where} ({exc.strerror or exc})") from None


def _url(server) -> str:
    host = server.get_host()
    shown = "localhost" if host in ("0.0.0.0", "::", "") else host
    return f"http://{shown}:{server.get_port()}"


class Viewer:
    """A running viewer: ``server`` (a ``viser.ViserServer``), ``url``, :meth:`close`."""

    def __init__(self, *, host: str, port: int, title: str):
        viser = _viser()
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"port must be an integer 1..65535, got {port!r}")
        check_address(host, port)
        with contextlib.redirect_stdout(io.StringIO()):      # its banner: serve() prints the URL
            self.server = viser.ViserServer(host=host, port=port, label=title, verbose=False)
        self.url = _url(self.server)
        self._closed = threading.Event()
        self._stopped = False

    def _notify(self, event, title: str, text: str) -> None:
        client = getattr(event, "client", None)
        if client is not None:
            client.add_notification(title, text, color="red", auto_close_seconds=8.0)

    def close(self) -> None:
        """Stop the server (and what the viewer runs); once."""
        self._closed.set()
        if not self._stopped:
            self._stopped = True
            with contextlib.redirect_stdout(io.StringIO()):
                self.server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---------------------------------------------------------------------------------- playback
class PlaybackViewer(Viewer):
    """Plays back a trajectory (see :func:`view_run`)."""

    def __init__(self, traj, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 speed: float = 1.0, loop: bool = False, play: bool = True,
                 title: str | None = None):
        self.playback = Playback(np.asarray(traj.times), speed=speed, loop=loop)
        name = title or (traj.metadata or {}).get("name") or "run"
        super().__init__(host=host, port=port, title=f"strandlab: {name}")
        self.traj = traj
        self._lock = threading.Lock()
        try:
            layout = SceneLayout.of_trajectory(traj)
            f = traj.frame(0)
            self.view = SceneView(self.server, layout, f.positions, f.extra_points,
                                  bounds=_run_bounds(traj, layout))
            self.shown = 0
            self._gui()
        except BaseException:
            super().close()
            raise
        if play:
            self.playback.play()
        self._play_button.label = "Pause" if self.playback.playing else "Play"
        self._thread = threading.Thread(target=self._ticks, name="strandlab-playback",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the playback thread (a frame being drawn is finished first, so that the file
        is not closed under a read), the server, and close the trajectory file."""
        self._closed.set()
        thread = getattr(self, "_thread", None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=_JOIN)
        super().close()
        _close(self.traj)

    def _gui(self) -> None:
        gui, pb = self.server.gui, self.playback
        self._status = gui.add_markdown(self._status_text())
        self._play_button = gui.add_button("Play")
        self._frame = gui.add_slider("frame", min=0, max=max(pb.n_frames - 1, 1), step=1,
                                     initial_value=0, disabled=pb.n_frames < 2)
        self._speed = gui.add_number("speed (x real time)", initial_value=pb.speed, min=0.001,
                                     max=1000.0, step=0.001)
        self._loop = gui.add_checkbox("loop", initial_value=pb.loop)

        @self._play_button.on_click
        def _(event) -> None:
            with self._lock:
                self.pause() if pb.playing else self.play()

        @self._frame.on_update
        def _(event) -> None:
            if event.client is not None:        # not our own update of the slider
                self.scrub(int(self._frame.value))

        @self._speed.on_update
        def _(event) -> None:
            try:
                with self._lock:
                    pb.set_speed(self._speed.value)
            except ValueError as exc:
                self._notify(event, "speed", str(exc))

        @self._loop.on_update
        def _(event) -> None:
            with self._lock:
                pb.loop = bool(self._loop.value)

    def _status_text(self) -> str:
        pb, t = self.playback, self.traj
        return (f"**frame {pb.frame} / {pb.n_frames - 1}**, t = {t.times[pb.frame]:.4g} s "
                f"(run: {t.status})")

    def play(self) -> None:
        self.playback.play()
        self._play_button.label = "Pause"

    def pause(self) -> None:
        self.playback.pause()
        self._play_button.label = "Play"

    def scrub(self, k: int) -> int:
        """Show frame ``k`` (playing goes on from there); returns the frame shown."""
        with self._lock:
            k = self.playback.scrub(k)
        self.show(k)
        return k

    def show(self, k: int) -> None:
        """Draw frame ``k`` and move the frame slider to it."""
        f = self.traj.frame(k)
        broken = getattr(self.traj, "edge_broken", None)
        self.view.update(f.positions, f.extra_points, None if broken is None else broken[k])
        self.shown = k
        self._frame.value = k
        self._status.content = self._status_text()

    def _ticks(self) -> None:
        last = _time.perf_counter()
        while not self._closed.wait(_TICK):
            now = _time.perf_counter()
            with self._lock:
                was_playing = self.playback.playing
                k = self.playback.advance(now - last)
                if was_playing and not self.playback.playing:
                    self._play_button.label = "Play"        # the end of the run
            last = now
            if k != self.shown:
                self.show(k)


def _run_bounds(traj, layout: SceneLayout, samples: int = 64) -> np.ndarray:
    """Bounds of the strands and extra points of about ``samples`` frames spread over the run
    (each read on its own) and of the solid colliders [m]."""
    from .camera import bounds_of
    from .tubes import _collider_bounds

    frames = np.unique(np.linspace(0, traj.n_frames - 1, samples).astype(int))
    parts = []
    for k in frames:
        f = traj.frame(int(k))
        parts += [bounds_of(f.positions, f.extra_points)]
    return bounds_of(*parts, *_collider_bounds(layout.colliders))


def view_run(path, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT, speed: float = 1.0,
             loop: bool = False, play: bool = True) -> PlaybackViewer:
    """Serve a page that plays back the run in folder (or trajectory file) ``path``: play and
    pause, a frame slider to scrub, the speed (simulated seconds per wall second) and looping.
    Errors as :func:`open_run`; ValueError for a bad speed or port."""
    traj = open_run(path)
    try:
        return PlaybackViewer(traj, host=host, port=port, speed=speed, loop=loop, play=play)
    except BaseException:
        _close(traj)
        raise


# ---------------------------------------------------------------------------------- live
class LiveViewer(Viewer):
    """Shows a simulation as it runs, with its controls (see :func:`view_live`)."""

    def __init__(self, sim, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 paused: bool = False, realtime: bool = True):
        self.sim = LiveSimulation(sim, paused=paused, realtime=realtime)   # may refuse sim
        super().__init__(host=host, port=port, title=f"strandlab: {sim.name} (live)")
        self._status_at = -math.inf
        try:
            snap = self.sim.snapshot()
            layout = SceneLayout.of_scene(sim.scene)
            self.view = SceneView(self.server, layout, snap.positions, snap.extra,
                                  bounds=_scene_bounds(snap, layout), view=sim.view,
                                  handles=True)
            self._gui(sim)
            self._drag()
        except BaseException:
            super().close()
            raise
        self.sim.on_frame = self._on_frame
        self.sim.start()

    def close(self) -> None:
        self.sim.stop()
        super().close()

    # -- page ----------------------------------------------------------------------------------
    def _on_frame(self, snap: Snapshot) -> None:
        self.view.update(snap.positions, snap.extra, snap.edge_broken)
        now = _time.perf_counter()
        if now - self._status_at >= _STATUS_EVERY or self.sim.paused:
            self._status_at = now
            self._status.content = self._status_text(snap)
            self._run_button.label = "Run" if self.sim.paused else "Pause"

    def _status_text(self, snap: Snapshot) -> str:
        state = "paused" if self.sim.paused else "running"
        msg = f"\n\n{self.sim.message}" if self.sim.message else ""
        return f"**t = {snap.time:.4g} s**, step {snap.steps} ({state}){msg}"

    def _gui(self, sim) -> None:
        gui, live = self.server.gui, self.sim
        self._status = gui.add_markdown(self._status_text(live.snapshot()))
        self._run_button = gui.add_button("Run" if live.paused else "Pause")
        step = gui.add_button("Step")
        reset = gui.add_button("Reset")

        @self._run_button.on_click
        def _(event) -> None:
            if live.paused:
                live.resume()
                self._run_button.label = "Pause"
            else:
                live.pause()
                self._run_button.label = "Run"

        step.on_click(lambda event: live.step(1))
        reset.on_click(lambda event: live.reset())
        with gui.add_folder("Parameters"):
            self._gravity_controls(gui, sim)
        with gui.add_folder(f"Solver: {sim.solver}"):
            for f in settings_fields(live.settings):
                self._setting_control(gui, f)
        shown = self.view.handles is not None and self.view.handles.visible
        handles = gui.add_checkbox("vertex handles (drag with the mouse)", initial_value=shown)

        @handles.on_update
        def _(event) -> None:
            self.view.show_handles(bool(handles.value))

    def _gravity_controls(self, gui, sim) -> None:
        g = np.asarray(sim.scene.gravity, dtype=np.float64)
        size = float(np.linalg.norm(g))
        direction = g / size if size > 0 else np.array([0.0, 0.0, -1.0])
        self.gravity = gui.add_slider("gravity [m/s²]", min=0.0, max=max(20.0, 2.0 * size),
                                      step=0.01, initial_value=round(size, 2))
        self.stiffness = gui.add_slider("stiffness x 10^", min=-3.0, max=3.0, step=0.1,
                                        initial_value=0.0,
                                        hint="Young's and shear moduli of every material "
                                             "times 10 to this power")

        @self.gravity.on_update
        def _(event) -> None:
            if event.client is not None:
                self.sim.set_gravity(direction * float(self.gravity.value))

        @self.stiffness.on_update
        def _(event) -> None:
            if event.client is not None:
                self.sim.set_stiffness_scale(10.0 ** float(self.stiffness.value))

    def _setting_control(self, gui, f: SettingField) -> None:
        if f.kind == "bool":
            h = gui.add_checkbox(f.name, initial_value=bool(f.value))
        elif f.kind in ("int", "float") and not f.optional:
            h = gui.add_number(f.name, initial_value=f.value, step=1 if f.kind == "int" else None)
        else:
            h = gui.add_text(f.name, initial_value="auto" if f.value is None else str(f.value))
        last = [h.value]

        @h.on_update
        def _(event) -> None:
            if event.client is None:
                return
            try:
                self.sim.set_setting(f.name, parse_setting(f, h.value))
                last[0] = h.value
            except ValueError as exc:
                self._notify(event, f"solver setting {f.name}", str(exc))
                h.value = last[0]

    def _drag(self) -> None:
        handles = self.view.handles
        if handles is None:
            return
        grab = {"offset": np.zeros(3)}

        @handles.on_drag
        async def _(event) -> None:     # async: phases arrive in order
            if event.phase == "start":
                positions = self.sim.snapshot().positions
                k = nearest_vertex(positions, event.start_position)
                grab["offset"] = np.asarray(event.start_position) - positions[k]
                self.sim.grab(k)
            elif event.phase == "update" and self.sim.grabbed is not None:
                self.sim.drag(np.asarray(event.end_position) - grab["offset"])
            elif event.phase == "end":
                self.sim.release()


def _scene_bounds(snap: Snapshot, layout: SceneLayout) -> np.ndarray:
    from .camera import bounds_of
    from .tubes import _collider_bounds

    return bounds_of(snap.positions, snap.extra, *_collider_bounds(layout.colliders))


def view_live(sim, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT, paused: bool = False,
              realtime: bool = True) -> LiveViewer:
    """Serve a page showing ``sim`` (a :class:`~strandlab.sim.runner.Simulation`) as it runs,
    stepped in a background thread (in real time unless ``realtime=False``), with controls for
    gravity, stiffness and the solver's settings, run/pause, step, reset and vertex dragging."""
    return LiveViewer(sim, host=host, port=port, paused=paused, realtime=realtime)


# ---------------------------------------------------------------------------------- serving
def serve(viewer: Viewer, *, out=None) -> int:
    """Print the viewer's URL to ``out`` (default stdout) and wait until Ctrl-C (or
    :meth:`Viewer.close`); then close it and return 0."""
    out = sys.stdout if out is None else out
    try:        # from before the address is printed: Ctrl-C right after it is caught too
        print(f"viewer: {viewer.url}  (Ctrl-C to stop)", file=out, flush=True)
        while not viewer._closed.wait(0.25):
            pass
    except KeyboardInterrupt:
        print("viewer: stopped", file=out, flush=True)
    finally:
        viewer.close()
    return 0
