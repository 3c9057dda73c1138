"""What the viewer sends to the page, checked without a browser: strand segments (torn edges
hidden), the vertex handles, picking the grabbed vertex, the scene's layout and colliders."""
import socket

import numpy as np
import pytest
import viser

import strandlab as sl
from strandlab.io.trajectory import edge_vertices
from strandlab.render.viewer_scene import (
    SceneLayout,
    SceneView,
    handle_mesh,
    nearest_vertex,
    segments,
)
from strandlab.sim.shapes import circle, line


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_strands():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005)
    b.add_strand(line((0, 0, 1), (0.3, 0, 1), 3), material=mat)
    b.add_strand(circle(radius=0.1, segments=4, center=(0, 0, 0.5)), material=mat, closed=True)
    b.add_plane((0, 0, 0), (0, 0, 1))
    b.add_sphere((0, 0, 0.2), 0.1)
    return b.build()


def test_segments_follow_the_edges_and_hide_torn_ones():
    scene = two_strands()
    lay = SceneLayout.of_scene(scene)
    a, b = edge_vertices(lay.strand_offsets, lay.edge_offsets, lay.closed)
    pos = np.arange(3 * scene.n_vertices, dtype=float).reshape(-1, 3)
    seg = segments(pos, a, b)
    assert seg.shape == (scene.n_edges, 2, 3) == (7, 2, 3)
    assert np.array_equal(seg[2], pos[[2, 3]])
    assert np.array_equal(seg[-1], pos[[7, 4]])          # the loop closes on its first vertex
    hidden = np.zeros(scene.n_edges, bool)
    hidden[1] = True
    cut = segments(pos, a, b, hidden)
    assert np.array_equal(cut[1, 1], cut[1, 0])          # collapsed: not drawn
    assert np.array_equal(np.delete(cut, 1, 0), np.delete(seg, 1, 0))
    assert [c["type"] for c in lay.colliders] == ["plane", "sphere"]
    assert lay.n_extra == 0 and lay.metadata["scene"]["n_strands"] == 2


def test_handles_surround_each_vertex_and_picking_finds_the_nearest():
    pos = np.array([[0.0, 0, 0], [1.0, 0, 0], [0, 2.0, 0]])
    verts, faces = handle_mesh(pos, 0.1)
    assert verts.shape == (18, 3) and faces.shape == (24, 3)
    centres = verts.reshape(3, 6, 3).mean(axis=1)
    assert np.allclose(centres, pos)
    assert np.allclose(np.linalg.norm(verts.reshape(3, 6, 3) - pos[:, None], axis=2), 0.1)
    assert faces.max() == 17 and set(faces[8:16].ravel()) == set(range(6, 12))
    assert nearest_vertex(pos, (0.9, 0.3, 0.0)) == 1
    assert nearest_vertex(pos, (0.1, 1.2, 0.0)) == 2


def test_scene_view_draws_strands_colliders_and_moves_them():
    import contextlib
    import io

    scene = two_strands()
    lay = SceneLayout.of_scene(scene)
    pos = np.concatenate([s.points for s in scene.strands])
    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    try:
        view = SceneView(server, lay, pos, np.zeros((0, 3)), bounds=np.array([[-1.0] * 3,
                                                                             [1.0] * 3]),
                         handles=True)
        assert np.allclose(view.strands.points, segments(pos, view.a, view.b))
        moved = pos + [0.0, 0.0, 0.25]
        view.update(moved, np.zeros((0, 3)))
        assert np.allclose(view.strands.points, segments(moved, view.a, view.b))
        assert np.allclose(view.handles.vertices.reshape(-1, 6, 3).mean(axis=1), moved)
        view.show_handles(False)
        view.update(pos, np.zeros((0, 3)))               # hidden handles are left alone
        assert np.allclose(view.handles.vertices.reshape(-1, 6, 3).mean(axis=1), moved)
        colours = np.asarray(view.strands.colors)
        assert (colours[:3] == colours[0]).all() and (colours[3] != colours[0]).any()
        with pytest.raises(ValueError, match="collider 0 has unknown type 'cone'"):
            SceneView(server, SceneLayout(lay.strand_offsets, lay.edge_offsets, lay.closed,
                                          lay.radii, lay.extra_triangles, 0,
                                          colliders=[{"type": "cone"}]),
                      pos, np.zeros((0, 3)), bounds=np.array([[-1.0] * 3, [1.0] * 3]))
    finally:
        with contextlib.redirect_stdout(io.StringIO()):
            server.stop()


def test_scene_view_draws_the_rods_of_a_mixed_mesh_and_moves_them():
    import contextlib
    import io

    from strandlab.sim.simplicial import SimplicialBuilder

    x = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.2, 0.0, 0.05], [0.1, 0.1, 0.0]])
    mb = SimplicialBuilder(x, name="rods")
    mb.add_rods([[0, 1], [1, 2], [1, 3]], name="tripod",
                material=sl.Material(young_modulus=1e7, density=1e3, radius=0.004))
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_simplicial_mesh(mb.build())
    lay = SceneLayout.of_scene(b.build())
    assert lay.extra_segments.tolist() == [[0, 1], [1, 2], [1, 3]]
    assert np.allclose(lay.extra_segment_radii, 0.004)
    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    try:
        view = SceneView(server, lay, np.zeros((0, 3)), x,
                         bounds=np.array([[-1.0] * 3, [1.0] * 3]))
        assert view.loose.size == 0                    # rod vertices are not loose points
        assert np.allclose(view.rods.points, x[[[0, 1], [1, 2], [1, 3]]])
        view.update(np.zeros((0, 3)), x + [0.0, 0.0, 0.3])
        assert np.allclose(view.rods.points, x[[[0, 1], [1, 2], [1, 3]]] + [0.0, 0.0, 0.3])
    finally:
        with contextlib.redirect_stdout(io.StringIO()):
            server.stop()
