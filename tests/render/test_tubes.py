"""The PyVista tube renderer: strands where the camera puts them, per-strand colour, colour by
strain, a still camera fitted to all frames, frames as axes, meshes, colliders, MP4 output."""
import numpy as np
import pytest

from strandlab.io.trajectory import Trajectory
from strandlab.render import Camera, make_video, render_trajectory
from strandlab.render import backends as backends_module
from strandlab.render.scalars import strand_colors
from strandlab.render.tubes import BACKGROUND, TubeRenderer, extra_groups, extra_rods

SIZE = (160, 120)
TOP = Camera(elevation=90.0, azimuth=-90.0)     # looking down -z, x to the right


def _drawn(img, tol=12):
    return np.any(np.abs(img.astype(int) - np.array(BACKGROUND)) > tol, axis=2)


def _two_strands(stretch=1.3, radius=0.01, scene=None, extra=None, tri=None):
    """Strand A (y = +0.3) and strand B (y = -0.3) along x, 11 vertices; frame 1 stretches B
    about its middle by ``stretch``; frame 2 equals frame 0."""
    x = np.linspace(-0.5, 0.5, 11)
    a = np.c_[x, np.full(11, 0.3), np.zeros(11)]
    b = np.c_[x, np.full(11, -0.3), np.zeros(11)]
    b1 = b.copy()
    b1[:, 0] *= stretch
    pos = np.array([np.vstack([a, b]), np.vstack([a, b1]), np.vstack([a, b])])
    n_x = 0 if extra is None else extra.shape[0]
    d1 = np.tile([0.0, 0.0, 1.0], (3, 20, 1))
    return Trajectory(times=np.arange(3) * 0.1, positions=pos, d1=d1,
                      strand_offsets=[0, 11, 22], edge_offsets=[0, 10, 20], closed=[False, False],
                      radii=[radius, radius],
                      extra_points=np.zeros((3, 0, 3)) if extra is None else np.tile(extra,
                                                                                     (3, 1, 1)),
                      extra_triangles=np.zeros((0, 3), int) if tri is None else tri,
                      metadata={} if scene is None else {"scene": scene}) if n_x >= 0 else None


def _pixel(img, view, point):
    c, r = np.rint(view.project(np.asarray(point, float)[None], SIZE)[0]).astype(int)
    return img[r, c].astype(int)


def test_projection_matches_vtk_and_the_fit_keeps_everything_in_view():
    tr = _two_strands()
    with TubeRenderer(tr, size=SIZE, camera=Camera(elevation=25, azimuth=40)) as r:
        r.image(0)
        pts = np.array([[0.5, 0.3, 0.0], [-0.65, -0.3, 0.0], [0.1, 0.2, 0.05]])
        ren = r.plotter.renderer
        for p, (c, row) in zip(pts, r.view.project(pts, SIZE)):
            ren.SetWorldPoint(*p, 1.0)
            ren.WorldToDisplay()
            x, y, _ = ren.GetDisplayPoint()
            assert abs(x - c) < 0.6 and abs((SIZE[1] - y) - row) < 0.6
        corners = np.stack(np.meshgrid(*r.bounds.T, indexing="ij"), -1).reshape(-1, 3)
        px = r.view.project(corners, SIZE)
        assert np.all((px > 0) & (px < np.array(SIZE)))
    # the automatic fit: the sphere around the bounds fits a wide and a tall image, tightly
    bounds = np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    u = np.random.default_rng(1).normal(size=(400, 3))
    sphere = np.sqrt(3.0) * u / np.linalg.norm(u, axis=1)[:, None]
    for size in ((160, 120), (120, 160)):
        for cam in (Camera(), Camera(elevation=-40, azimuth=200, view_angle=50)):
            px = cam.resolve(bounds, size).project(sphere, size)
            assert np.all((px > 0) & (px < np.array(size)))
            margin = np.minimum(px, np.array(size) - px) / np.array(size)
            assert margin.min() < 0.05


def test_strands_in_their_own_colours_where_they_are():
    tr = _two_strands()
    with TubeRenderer(tr, size=SIZE, camera=TOP) as r:
        img = r.image(0)
        blue = _pixel(img, r.view, [0.0, 0.3, 0.0])
        orange = _pixel(img, r.view, [0.0, -0.3, 0.0])
        empty = _pixel(img, r.view, [0.0, 0.0, 0.0])
    want = (np.asarray(strand_colors(2))[:, :3] * 255).astype(int)
    assert np.argmax(blue) == np.argmax(want[0]) == 2      # tab10 blue
    assert np.argmax(orange) == np.argmax(want[1]) == 0    # tab10 orange
    assert np.abs(empty - BACKGROUND).max() <= 2           # between the strands: background


def test_color_by_strain_shows_the_stretched_strand():
    tr = _two_strands(stretch=1.3)
    with TubeRenderer(tr, size=SIZE, camera=TOP, color_by="strain") as r:
        assert r.clim[0] == 0.0 and r.clim[1] == pytest.approx(0.3)
        before, after = r.image(0), r.image(1)
        a0, a1 = (_pixel(i, r.view, [0.2, 0.3, 0.0]) for i in (before, after))
        b0, b1 = (_pixel(i, r.view, [0.0, -0.3, 0.0]) for i in (before, after))
    assert np.abs(a1 - a0).max() <= 3       # A keeps its length: same colour
    assert np.abs(b0 - a0).max() <= 30      # unstretched B: same colour (shading aside)
    assert np.abs(b1 - a1).max() > 80       # stretched B: the other end of the colour map


def test_camera_stays_still_and_fits_all_frames():
    tr = _two_strands(stretch=1.3)
    with TubeRenderer(tr, size=SIZE, camera=TOP) as r:
        first, moved, back = r.image(0), r.image(1), r.image(2)
        tip = _pixel(moved, r.view, [0.6, -0.3, 0.0])       # B's end, only in frame 1
        assert r.bounds[1, 0] == pytest.approx(0.65)
    assert np.array_equal(first, back)
    assert np.abs(tip - BACKGROUND).max() > 12
    with TubeRenderer(tr, size=SIZE, camera=TOP, frames=[0]) as r:   # bounds of frame 0 only
        assert r.bounds[1, 0] == pytest.approx(0.5)


def test_thin_strands_are_widened_to_the_minimum_pixel_width():
    widths, true_px = {}, {}
    for radius, min_px in ((1e-6, 3.0), (1e-6, 6.0), (1e-6, 0.0), (0.05, 3.0)):
        with TubeRenderer(_two_strands(radius=radius), size=SIZE, camera=TOP,
                          min_width_px=min_px) as r:
            drawn = _drawn(r.image(0))
            c, row = np.rint(r.view.project(np.array([[0.05, 0.3, 0.0]]), SIZE)[0]).astype(int)
            widths[radius, min_px] = int(drawn[row - 10:row + 11, c].sum())   # across strand A
            true_px[radius] = 2 * radius / r.view.metres_per_pixel(SIZE[1])
    assert 3 <= widths[1e-6, 3.0] <= 4                  # widened to 3 px (+1 of edge blending)
    assert 6 <= widths[1e-6, 6.0] <= 7
    assert widths[1e-6, 0.0] <= 1                       # sub-pixel without widening
    assert true_px[0.05] > 7                            # wider than the minimum: true radius
    assert abs(widths[0.05, 3.0] - true_px[0.05]) <= 1.5


def test_frames_as_axes_meshes_and_colliders_are_drawn():
    extra = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0],            # a frame
                      [0.3, 0.05, 0.0], [0.45, 0.05, 0.0], [0.3, 0.2, 0.0]])          # a mesh
    scene = {"frames": [{}], "meshes": [{"n_vertices": 3}], "bodies": []}
    tr = _two_strands(scene=scene, extra=extra, tri=np.array([[3, 4, 5]]))
    axes, loose = extra_groups(tr)
    assert axes.tolist() == [0] and loose.size == 0
    colliders = [{"type": "sphere", "center": [-0.35, 0.0, 0.0], "radius": 0.08},
                 {"type": "plane", "point": [0, 0, -0.3], "normal": [0, 0, 1]}]
    with TubeRenderer(tr, size=SIZE, camera=TOP, colliders=colliders) as r:
        img = r.image(0)
        x_axis = _pixel(img, r.view, [0.06, 0.0, 0.0])
        y_axis = _pixel(img, r.view, [0.0, 0.06, 0.0])
        mesh = _pixel(img, r.view, [0.35, 0.09, 0.0])
        sphere = _pixel(img, r.view, [-0.35, 0.0, 0.08])
        floor = _pixel(img, r.view, [0.0, -0.15, -0.3])
    assert np.argmax(x_axis) == 0 and np.argmax(y_axis) == 1      # red x, green y
    assert np.argmax(mesh) == 2                                    # bluish mesh
    for p in (sphere, floor):
        assert np.abs(p - BACKGROUND).max() > 12
    assert np.abs(sphere - floor).max() > 5
    # without the scene description the extra points are loose points
    assert extra_groups(_two_strands(extra=extra, tri=np.array([[3, 4, 5]])))[1].tolist() == \
        [0, 1, 2]


def test_tapered_strands_are_drawn_with_their_vertex_radii():
    # strand A tapers from 0.05 m at its left end to 0.005 m at its right end
    tr = _two_strands(radius=0.05)
    tr.vertex_radii = np.r_[np.linspace(0.05, 0.005, 11), np.full(11, 0.05)]
    with TubeRenderer(tr, size=SIZE, camera=TOP, min_width_px=1.0) as r:
        drawn = _drawn(r.image(0))
        px = {}
        for x in (-0.4, 0.4):
            c, row = np.rint(r.view.project(np.array([[x, 0.3, 0.0]]), SIZE)[0]).astype(int)
            px[x] = int(drawn[row - 12:row + 13, c].sum())
        m_per_px = r.view.metres_per_pixel(SIZE[1])
    radius = np.interp([-0.4, 0.4], np.linspace(-0.5, 0.5, 11), tr.vertex_radii[:11])
    for x, rad in zip((-0.4, 0.4), radius):
        assert abs(px[x] - 2 * rad / m_per_px) <= 1.5
    assert px[-0.4] > 3 * px[0.4]


def test_rods_of_a_mixed_mesh_are_tubes_and_frames_keep_their_axes():
    # a frame (3 points), then a rod/shell/solid mesh of two vertices joined by one rod edge
    extra = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0],
                      [0.25, -0.1, 0.0], [0.25, 0.1, 0.0]])
    scene = {"frames": [{}], "meshes": [], "bodies": [],
             "simplicial": [{"name": "rod", "vertices": 2}]}
    tr = _two_strands(scene=scene, extra=extra)
    tr.extra_segments = np.array([[3, 4]])
    tr.extra_segment_radii = np.array([0.02])
    axes, loose = extra_groups(tr)
    assert axes.tolist() == [0] and loose.size == 0
    assert extra_rods(tr)[0].tolist() == [[3, 4]]
    with TubeRenderer(tr, size=SIZE, camera=TOP, min_width_px=1.0) as r:
        img = r.image(0)
        rod = _pixel(img, r.view, [0.25, 0.0, 0.0])
        beside = _pixel(img, r.view, [0.25 + 0.04, 0.0, 0.0])
        x_axis = _pixel(img, r.view, [0.06, 0.0, 0.0])
    assert rod[0] > rod[2] + 40                 # orange rod, not the bluish mesh colour
    assert np.abs(beside - BACKGROUND).max() <= 12     # as thick as its radius, no more
    assert np.argmax(x_axis) == 0
    # without the rod edges the two mesh points are loose points
    tr.extra_segments = np.zeros((0, 2), np.int64)
    tr.extra_segment_radii = np.zeros(0)
    assert extra_groups(tr)[1].tolist() == [3, 4]


def test_files_progress_bar_and_mp4(tmp_path, capsys):
    import imageio.v2 as imageio

    tr = _two_strands()
    paths = render_trajectory(tr, tmp_path / "f", backend="pyvista", size=(96, 64),
                              color_by="twist", progress=True)
    assert [p.name for p in paths] == [f"frame_0000{k}.png" for k in range(3)]
    assert "rendering (pyvista)" in capsys.readouterr().err
    out = make_video(paths, tmp_path / "movie.mp4", fps=10)
    assert out == tmp_path / "movie.mp4"
    with imageio.get_reader(out) as reader:
        assert reader.count_frames() == 3
        assert reader.get_data(0).shape == (64, 96, 3)


def test_backend_choice_and_bad_options(tmp_path, monkeypatch):
    tr = _two_strands()
    assert backends_module.choose_backend()[0] == "pyvista"
    assert "matplotlib" in backends_module.choose_backend("matplotlib")[1]
    paths = render_trajectory(tr, tmp_path, backend="matplotlib", size=(120, 80), every=2)
    assert len(paths) == 2
    monkeypatch.setattr(backends_module, "pyvista_available", lambda: False)
    name, message = backends_module.choose_backend("auto")
    assert name == "matplotlib" and "PyVista is not installed" in message
    with pytest.raises(ValueError, match="PyVista is not installed"):
        backends_module.choose_backend("pyvista")
    with pytest.raises(ValueError, match="unknown renderer 'povray'"):
        backends_module.choose_backend("povray")
    with pytest.raises(ValueError, match="color_by must be one of"):
        TubeRenderer(tr, color_by="colour")
    with pytest.raises(ValueError, match="size must be at least 16"):
        TubeRenderer(tr, size=(8, 8))
    with pytest.raises(ValueError, match=r"scalars\[0\] must have shape \[22\]"):
        TubeRenderer(tr, color_by="scalars", scalars=np.zeros((3, 5)))
    with pytest.raises(ValueError, match="clim must be"):
        TubeRenderer(tr, color_by="strain", clim=(1, 0))
    with pytest.raises(ValueError, match="collider 0 has unknown type 'cone'"):
        TubeRenderer(tr, colliders=[{"type": "cone"}])
    with pytest.raises(ValueError, match="camera distance must be"):
        Camera(distance=-1.0)
    with pytest.raises(ValueError, match="camera must be ELEV,AZIM"):
        Camera.parse("10")
    assert Camera.parse("10,20,3") == Camera(elevation=10.0, azimuth=20.0, distance=3.0)


def test_caller_scalars_per_edge_colour_the_strands():
    tr = _two_strands()
    per_edge = np.zeros((3, 20))
    per_edge[:, 10:] = 1.0                  # strand B's edges
    with TubeRenderer(tr, size=SIZE, camera=TOP, color_by="scalars", scalars=per_edge) as r:
        assert r.clim == (0.0, 1.0)
        img = r.image(0)
        a, b = _pixel(img, r.view, [0, 0.3, 0]), _pixel(img, r.view, [0, -0.3, 0])
    assert np.abs(a - b).max() > 80
