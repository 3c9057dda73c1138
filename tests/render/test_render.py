"""Headless rendering with matplotlib (the fallback renderer): PNG frames, fixed camera bounds,
colliders, and the video writer (MP4, or a GIF with a warning naming the reason)."""
import sys
import types

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

import strandlab.render.images as images
import strandlab.render.video as video
from strandlab.io.trajectory import Trajectory, load_trajectory, save_trajectory
from strandlab.render import VideoUnavailable, make_video, render_frame, scene_bounds
from strandlab.render.images import render_trajectory

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLLIDERS = [{"type": "plane", "point": [0, 0, -0.5], "normal": [0, 0.2, 1]},
             {"type": "sphere", "center": [0.3, 0, 0], "radius": 0.2},
             {"type": "capsule", "a": [-0.5, 0, 0], "b": [-0.5, 0, 0.6], "radius": 0.05,
              "friction": 0.3}]


def _trajectory(n_frames=4, times=None):
    """An open helix and a closed ring moving and deforming, plus one quad of mesh."""
    t = np.linspace(0, 4 * np.pi, 30)
    ring_t = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    frames, extra = [], []
    for k in range(n_frames):
        helix = np.c_[0.2 * np.cos(t), 0.2 * np.sin(t), 0.03 * t - 0.1 * k]
        ring = np.c_[0.3 * np.cos(ring_t) + 0.1 * k, 0.3 * np.sin(ring_t),
                     0.05 * np.sin(2 * ring_t)]
        frames.append(np.vstack([helix, ring]))
        extra.append(np.array([[0, 0, -0.4], [0.4, 0, -0.4], [0.4, 0.4, -0.4], [0, 0.4, -0.4]])
                     + np.array([0.05 * k, 0, 0]))
    return Trajectory(times=np.arange(n_frames) / 30 if times is None else times,
                      positions=np.array(frames),
                      d1=np.tile([0.0, 0.0, 1.0], (n_frames, 29 + 12, 1)),
                      strand_offsets=[0, 30, 42], edge_offsets=[0, 29, 41],
                      closed=[False, True], radii=[0.01, 0.004], extra_points=np.array(extra),
                      extra_triangles=[[0, 1, 2], [0, 2, 3]], metadata={})


def _pixels(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


# ---------------------------------------------------------------------------------- frames
def test_render_trajectory_writes_valid_pngs_of_the_right_size(tmp_path):
    tr = _trajectory()
    paths = render_trajectory(tr, tmp_path / "frames", colliders=COLLIDERS, dpi=50,
                              size=(2, 2.4), view=(30, 45))
    assert [p.name for p in paths] == [f"frame_0000{k}.png" for k in range(4)]
    for p in paths:
        assert p.is_file() and p.read_bytes()[:8] == PNG_SIGNATURE
        with Image.open(p) as im:
            im.verify()
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size == (100, 120)
    images = [_pixels(p) for p in paths]
    for a, b in zip(images, images[1:]):
        assert not np.array_equal(a, b)
    # something besides the white background is drawn
    assert np.mean(np.any(images[0] < 200, axis=2)) > 0.01


def test_every_and_fixed_camera(tmp_path):
    tr = _trajectory(n_frames=5, times=np.zeros(5))
    tr.positions[2] = tr.positions[0]
    tr.extra_points[2] = tr.extra_points[0]
    paths = render_trajectory(tr, tmp_path, every=2, dpi=40, size=(2, 2))
    assert [p.name for p in paths] == ["frame_00000.png", "frame_00002.png", "frame_00004.png"]
    # same geometry and title: identical images, so the bounds do not follow the geometry
    assert np.array_equal(_pixels(paths[0]), _pixels(paths[1]))
    assert not np.array_equal(_pixels(paths[0]), _pixels(paths[2]))


def test_lazily_read_trajectory_renders_the_same_images(tmp_path):
    tr = _trajectory(n_frames=3)
    eager = render_trajectory(tr, tmp_path / "eager", dpi=30, size=(2, 2), title="x")
    with load_trajectory(save_trajectory(tmp_path / "t.h5", tr)) as stored:
        lazy = render_trajectory(stored, tmp_path / "lazy", dpi=30, size=(2, 2), title="x")
    assert len(lazy) == len(eager) == 3
    for a, b in zip(eager, lazy):
        assert np.array_equal(_pixels(a), _pixels(b))


def test_trajectory_bounds_by_blocks_match_scene_bounds():
    tr = _trajectory(n_frames=5)
    assert np.allclose(images._trajectory_bounds(tr, block=2),
                       scene_bounds(tr.positions, tr.extra_points), rtol=0, atol=1e-15)


def test_render_frame_returns_a_figure_or_writes_a_png(tmp_path):
    tr = _trajectory(1)
    fig = render_frame(tr.positions[0], tr.strand_offsets, closed=tr.closed, radii=tr.radii,
                       extra_points=tr.extra_points[0], extra_triangles=tr.extra_triangles,
                       colliders=COLLIDERS, title="ring", show_points=True)
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_title() == "ring"
    p = render_frame(tr.positions[0], tr.strand_offsets, path=tmp_path / "one.png", dpi=30,
                     size=(3, 2))
    with Image.open(p) as im:
        assert im.size == (90, 60)
    thin = _pixels(render_frame(tr.positions[0], tr.strand_offsets, dpi=40, size=(2, 2),
                                path=tmp_path / "thin.png"))
    thick = _pixels(render_frame(tr.positions[0], tr.strand_offsets, radii=[0.05, 0.05],
                                 dpi=40, size=(2, 2), path=tmp_path / "thick.png"))
    assert np.sum(np.any(thick < 200, axis=2)) > np.sum(np.any(thin < 200, axis=2))


def test_scene_bounds_is_an_equal_cube():
    tr = _trajectory()
    b = scene_bounds(tr.positions, tr.extra_points)
    assert b.shape == (2, 3)
    assert np.allclose(b[1] - b[0], (b[1] - b[0])[0])
    pts = np.concatenate([tr.positions.reshape(-1, 3), tr.extra_points.reshape(-1, 3)])
    assert np.all(pts >= b[0]) and np.all(pts <= b[1])
    nan = np.array([[0, 0, 0], [np.nan, 5, 5], [1, 2, 0.5]])
    assert np.allclose(scene_bounds(nan), scene_bounds(nan[[0, 2]]))
    assert np.allclose(scene_bounds(None, np.zeros((0, 3))), [[-0.5] * 3, [0.5] * 3])


def test_render_errors_name_the_problem(tmp_path):
    pos, off = _trajectory(1).positions[0], [0, 30, 42]
    with pytest.raises(ValueError, match="unknown type 'cone'"):
        render_frame(pos, off, colliders=[{"type": "cone"}])
    with pytest.raises(ValueError, match="collider 0 .sphere. lacks 'radius'"):
        render_frame(pos, off, colliders=[{"type": "sphere", "center": [0, 0, 0]}])
    with pytest.raises(ValueError, match="collider 1 .plane.: the normal is zero"):
        render_frame(pos, off, colliders=[COLLIDERS[1], {"type": "plane", "point": [0, 0, 0],
                                                         "normal": [0, 0, 0]}])
    with pytest.raises(ValueError, match="offsets must start at 0 and end at 42"):
        render_frame(pos, [0, 30, 40])
    with pytest.raises(ValueError, match=r"radii must have shape \[2\]"):
        render_frame(pos, off, radii=[0.1])
    with pytest.raises(ValueError, match=r"extra_triangles\[0\]"):
        render_frame(pos, off, extra_points=np.zeros((2, 3)), extra_triangles=[[0, 1, 2]])
    with pytest.raises(ValueError, match="bounds must be"):
        render_frame(pos, off, bounds=[[0, 0, 0], [1, 1, 0]])
    with pytest.raises(ValueError, match="view must be"):
        render_frame(pos, off, view=(10,))
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        render_trajectory(_trajectory(), tmp_path, every=0)


# ---------------------------------------------------------------------------------- video
def test_no_mp4_is_an_error_or_a_gif_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(video, "ffmpeg_missing_reason", lambda: "imageio-ffmpeg is not installed")
    paths = render_trajectory(_trajectory(), tmp_path / "frames", dpi=30, size=(2, 2))
    with pytest.raises(VideoUnavailable, match="cannot write an MP4: imageio-ffmpeg is not"):
        make_video(paths, tmp_path / "movie.mp4", fps=20)
    assert not (tmp_path / "movie.gif").exists()
    with pytest.warns(UserWarning, match=r"imageio-ffmpeg is not installed.*movie.gif instead"):
        out = make_video(paths, tmp_path / "movie.mp4", fps=20, gif_fallback=True)
    assert out == tmp_path / "movie.gif" and out.is_file()
    with Image.open(out) as gif:
        assert gif.format == "GIF" and gif.size == (60, 60)
        assert gif.n_frames == len(paths) == 4
        assert gif.info["duration"] == 50 and gif.info["loop"] == 0


class _FakeWriter:
    """Stands in for imageio's ffmpeg writer; records what it is given."""

    calls = []

    def __init__(self, path, **kwargs):
        self.path, self.kwargs, self.frames = path, kwargs, []
        _FakeWriter.calls.append(self)

    def append_data(self, frame):
        self.frames.append(frame)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.path.write_bytes(b"mp4")
        return False


def test_mp4_route_with_imageio(tmp_path, monkeypatch):
    v2 = types.ModuleType("imageio.v2")
    v2.get_writer = _FakeWriter
    imageio = types.ModuleType("imageio")
    imageio.v2 = v2
    monkeypatch.setitem(sys.modules, "imageio", imageio)
    monkeypatch.setitem(sys.modules, "imageio.v2", v2)
    fake_ffmpeg = types.ModuleType("imageio_ffmpeg")
    fake_ffmpeg.get_ffmpeg_exe = lambda: "ffmpeg"
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", fake_ffmpeg)
    assert video.ffmpeg_available()
    paths = render_trajectory(_trajectory(3), tmp_path / "frames", dpi=25, size=(2.2, 2))
    out = make_video(paths, tmp_path / "movie.avi", fps=24)
    assert out == tmp_path / "movie.mp4" and out.is_file()
    w = _FakeWriter.calls[-1]
    assert w.kwargs["fps"] == 24 and w.kwargs["codec"] == "libx264"
    assert len(w.frames) == 3
    # 55 x 50 pixels padded to even dimensions for H.264
    assert all(f.shape == (50, 56, 3) and f.dtype == np.uint8 for f in w.frames)


def test_make_video_errors(tmp_path):
    with pytest.raises(ValueError, match="image_paths is empty"):
        make_video([], tmp_path / "v.mp4")
    with pytest.raises(FileNotFoundError, match="gone.png"):
        make_video([tmp_path / "gone.png"], tmp_path / "v.mp4")
    a = render_frame(np.zeros((2, 3)) + [[0, 0, 0], [1, 1, 1]], [0, 2], dpi=20, size=(2, 2),
                     path=tmp_path / "a.png")
    b = render_frame(np.zeros((2, 3)) + [[0, 0, 0], [1, 1, 1]], [0, 2], dpi=20, size=(3, 2),
                     path=tmp_path / "b.png")
    with pytest.raises(ValueError, match="fps must be a positive number"):
        make_video([a], tmp_path / "v.mp4", fps=0)
    with pytest.raises(ValueError, match="b.png is 60x40 pixels; the first frame is 40x40"):
        make_video([a, b], tmp_path / "v.mp4")
    (tmp_path / "junk.png").write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.png cannot be read"):
        make_video([a, tmp_path / "junk.png"], tmp_path / "v.mp4")


def test_missing_packages_are_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)       # import fails
    assert "imageio-ffmpeg is not installed" in video.ffmpeg_missing_reason()
    assert not video.ffmpeg_available()
    broken = types.ModuleType("imageio_ffmpeg")

    def no_binary():
        raise RuntimeError("no ffmpeg exe could be found")

    broken.get_ffmpeg_exe = no_binary
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", broken)
    assert "finds no ffmpeg executable (no ffmpeg exe" in video.ffmpeg_missing_reason()
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    assert video.ffmpeg_missing_reason().startswith("imageio is not installed")
