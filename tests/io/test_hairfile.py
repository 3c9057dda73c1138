"""Hair files: the .hair and .data layouts (files built here byte by byte from the formats'
descriptions), round trips, units, bad input and atomic writes; the Hair container and its
conversion to a scene."""
import os
import struct

import numpy as np
import pytest

from strandlab import Material
from strandlab.io import atomic, hairfile
from strandlab.io.hairfile import Hair, read_hair, read_hair_header, write_hair

# float32 storage: one rounding to the nearest float32, relative error <= 2^-24 ~ 6e-8 per
# component (the float64 scaling around it adds ~1e-16); 1e-7 bounds it with a little room.
F32 = 1e-7


# ---------------------------------------------------------------------------------- builders
def hair_header(n_strands, n_points, flags, dseg=0, dthick=0.0, dtrans=0.0, color=(0, 0, 0),
                info=b"", magic=b"HAIR") -> bytes:
    """The 128-byte header, field by field as the format describes it."""
    out = magic
    out += n_strands.to_bytes(4, "little") + n_points.to_bytes(4, "little")
    out += flags.to_bytes(4, "little") + dseg.to_bytes(4, "little")
    out += struct.pack("<f", dthick) + struct.pack("<f", dtrans)
    out += b"".join(struct.pack("<f", c) for c in color)
    out += info + b"\0" * (88 - len(info))
    assert len(out) == 128
    return out


def f32(values) -> bytes:
    return b"".join(struct.pack("<f", v) for v in np.ravel(values))


def data_file(strands) -> bytes:
    out = struct.pack("<i", len(strands))
    for s in strands:
        out += struct.pack("<i", len(s)) + f32(s)
    return out


PTS = np.array([[0.0, 0.0, 1.0], [0.5, 0.0, 1.0], [1.0, 0.25, 1.0],   # strand 0: 2 segments
                [2.0, 0.0, 0.0], [2.0, 0.0, -0.75]])                   # strand 1: 1 segment
THICK = np.array([0.5, 0.25, 0.125, 1.0, 0.75])
TRANS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
COLS = np.arange(15, dtype=float).reshape(5, 3) / 16


def full_hair_bytes() -> bytes:
    return (hair_header(2, 5, 1 | 2 | 4 | 8 | 16, dseg=7, dthick=0.5, dtrans=0.25,
                        color=(0.25, 0.5, 0.75), info=b"two strands")
            + (2).to_bytes(2, "little") + (1).to_bytes(2, "little")
            + f32(PTS) + f32(THICK) + f32(TRANS) + f32(COLS))


def sample_hair(**kw) -> Hair:
    rng = np.random.default_rng(4)
    strands = [np.cumsum(rng.uniform(0.1, 1.0, (n, 3)), axis=0) for n in (5, 3, 8)]
    return Hair.from_strands(strands, **kw)


# ---------------------------------------------------------------------------------- layout
def test_reads_a_hair_file_built_from_the_format(tmp_path):
    path = tmp_path / "spec.hair"
    path.write_bytes(full_hair_bytes())
    h = read_hair(path)
    assert h.n_strands == 2 and h.n_points == 5
    assert h.offsets.tolist() == [0, 3, 5]
    # every value below is exact in float32
    np.testing.assert_array_equal(h.points, PTS)
    np.testing.assert_array_equal(h.strand(1), PTS[3:])
    np.testing.assert_array_equal(h.thickness, THICK)
    np.testing.assert_array_equal(h.transparency, TRANS)
    np.testing.assert_array_equal(h.colors, COLS)
    assert h.info == "two strands"
    assert h.default_thickness == 0.5 and h.default_transparency == 0.25
    assert h.default_color == (0.25, 0.5, 0.75)
    hd = read_hair_header(path)
    assert hd["flags"] == 31 and hd["default_segments"] == 7 and hd["n_points"] == 5


def test_without_segments_array_every_strand_has_the_default_count(tmp_path):
    path = tmp_path / "default.hair"
    pts = np.arange(3 * 9, dtype=float).reshape(9, 3) / 4
    path.write_bytes(hair_header(3, 9, 2, dseg=2, dthick=0.125) + f32(pts))
    h = read_hair(path)
    assert h.offsets.tolist() == [0, 3, 6, 9]
    np.testing.assert_array_equal(h.points, pts)
    assert h.thickness is None and h.transparency is None and h.colors is None
    assert h.default_thickness == 0.125


def test_reads_a_data_file_built_from_the_format(tmp_path):
    path = tmp_path / "spec.data"
    strands = [PTS[:3], PTS[3:4], PTS[3:]]          # the middle one: a bare scalp sample
    path.write_bytes(data_file(strands))
    h = read_hair(path)
    assert h.vertex_counts.tolist() == [3, 1, 2]
    np.testing.assert_array_equal(h.points, np.concatenate(strands))
    assert h.short_strands(3).tolist() == [1, 2]
    assert h.short_strands(2).tolist() == [1]


def test_writer_layout_read_back_field_by_field(tmp_path):
    h = Hair.from_strands([PTS[:3], PTS[3:]], thickness=[THICK[:3], THICK[3:]],
                          transparency=[TRANS[:3], TRANS[3:]], colors=[COLS[:3], COLS[3:]],
                          info="layout", default_transparency=0.5)
    path = write_hair(tmp_path / "w.hair", h)
    raw = path.read_bytes()
    assert raw[:4] == b"HAIR"
    n_s, n_p, flags, dseg = struct.unpack_from("<4I", raw, 4)
    assert (n_s, n_p) == (2, 5)
    assert flags == 1 | 2 | 4 | 8 | 16           # strands differ: segments array written
    assert struct.unpack_from("<f", raw, 24)[0] == 0.5
    assert raw[40:46] == b"layout" and raw[46:128] == b"\0" * 82
    assert struct.unpack_from("<2H", raw, 128) == (2, 1)
    at = 132
    np.testing.assert_array_equal(np.frombuffer(raw, "<f4", 15, at).reshape(5, 3), PTS)
    at += 60
    np.testing.assert_array_equal(np.frombuffer(raw, "<f4", 5, at), THICK)
    at += 20
    np.testing.assert_array_equal(np.frombuffer(raw, "<f4", 5, at), TRANS)
    at += 20
    np.testing.assert_array_equal(np.frombuffer(raw, "<f4", 15, at).reshape(5, 3), COLS)
    assert len(raw) == at + 60


def test_empty_hair_round_trip(tmp_path):
    empty = Hair(np.zeros((0, 3)), [0])
    for name in ("e.hair", "e.data"):
        g = read_hair(write_hair(tmp_path / name, empty))
        assert g.n_strands == 0 and g.points.shape == (0, 3)


def test_data_writer_layout(tmp_path):
    h = Hair.from_strands([PTS[:3], PTS[3:4]])
    raw = write_hair(tmp_path / "w.data", h).read_bytes()
    assert raw == data_file([PTS[:3], PTS[3:4]])


# ---------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("arrays", [(), ("thickness",), ("thickness", "transparency", "colors")])
@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_hair_round_trip(tmp_path, arrays, scale):
    rng = np.random.default_rng(1)
    n = [5, 3, 8]
    extra = {"thickness": [rng.uniform(5e-5, 1e-4, k) for k in n],
             "transparency": [rng.uniform(0, 1, k) for k in n],
             "colors": [rng.uniform(0, 1, (k, 3)) for k in n]}
    h = sample_hair(**{a: extra[a] for a in arrays}, info="round trip", default_thickness=7e-5,
                    default_color=(0.1, 0.2, 0.3))
    write_hair(tmp_path / "r.hair", h, scale=scale)
    g = read_hair(tmp_path / "r.hair", scale=scale)
    assert g.offsets.tolist() == h.offsets.tolist()
    np.testing.assert_allclose(g.points, h.points, rtol=F32, atol=0)
    for a in ("thickness", "transparency", "colors"):
        if a in arrays:
            np.testing.assert_allclose(getattr(g, a), getattr(h, a), rtol=F32, atol=0)
        else:
            assert getattr(g, a) is None
    assert g.info == "round trip"
    assert g.default_thickness == pytest.approx(7e-5, rel=F32)
    np.testing.assert_allclose(g.default_color, (0.1, 0.2, 0.3), rtol=F32)
    assert g.flags() == h.flags()


def test_scale_is_the_file_unit(tmp_path):
    h = sample_hair(thickness=[np.full(k, 1e-4) for k in (5, 3, 8)])
    write_hair(tmp_path / "cm.hair", h, scale=0.01)            # the file holds centimetres
    raw = read_hair(tmp_path / "cm.hair")                       # unit 1: the stored numbers
    np.testing.assert_allclose(raw.points, 100 * h.points, rtol=F32)
    np.testing.assert_allclose(raw.thickness, 1e-2, rtol=F32)
    write_hair(tmp_path / "cm.data", h, scale=0.01)
    np.testing.assert_allclose(read_hair(tmp_path / "cm.data", scale=0.01).points, h.points,
                               rtol=F32)
    np.testing.assert_allclose(read_hair(tmp_path / "cm.data").points, 100 * h.points,
                               rtol=F32)


@pytest.mark.parametrize("segments_array, flag", [(None, 0), (True, 1), (False, 0)])
def test_segments_array_choice(tmp_path, segments_array, flag):
    h = Hair.from_strands([PTS[:3], PTS[:3] + 1.0])            # equal strands
    write_hair(tmp_path / "s.hair", h, segments_array=segments_array)
    hd = read_hair_header(tmp_path / "s.hair")
    assert hd["flags"] & 1 == flag
    assert (tmp_path / "s.hair").stat().st_size == 128 + 4 * flag + 6 * 12
    assert hd["default_segments"] == 2
    np.testing.assert_array_equal(read_hair(tmp_path / "s.hair").points, h.points)


def test_data_round_trip_keeps_one_vertex_strands(tmp_path):
    h = Hair.from_strands([PTS[:3], PTS[3:4], PTS[3:]], thickness=[THICK[:3], [1.0], THICK[3:]])
    write_hair(tmp_path / "d.data", h, scale=0.5)
    g = read_hair(tmp_path / "d.data", scale=0.5)
    assert g.vertex_counts.tolist() == [3, 1, 2]
    np.testing.assert_allclose(g.points, h.points, rtol=F32)
    assert g.thickness is None                                  # .data holds points only


def test_format_override_and_suffix(tmp_path):
    h = sample_hair()
    write_hair(tmp_path / "x.bin", h, format="data")
    assert read_hair(tmp_path / "x.bin", format="data").n_strands == 3
    with pytest.raises(ValueError, match=r"x\.bin: unknown hair file suffix '\.bin'"):
        read_hair(tmp_path / "x.bin")
    with pytest.raises(ValueError, match="unknown hair format 'obj'"):
        write_hair(tmp_path / "x.hair", h, format="obj")
    for bad in (0, -1.0, float("nan"), "cm"):
        with pytest.raises(ValueError, match="scale must be a positive number"):
            read_hair(tmp_path / "x.bin", format="data", scale=bad)


# ---------------------------------------------------------------------------------- bad input
def _bad(tmp_path, data: bytes, pattern: str, name="bad.hair", **kw):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError, match=pattern) as info:
        read_hair(path, **kw)
    assert str(path) in str(info.value)                        # every message names the file
    return str(info.value)


def test_truncated_header(tmp_path):
    _bad(tmp_path, full_hair_bytes()[:57], "truncated: the header needs 128 bytes, found 57")


def test_wrong_magic(tmp_path):
    _bad(tmp_path, b"HAIX" + full_hair_bytes()[4:], "not a .hair file: the first 4 bytes are "
         "b'HAIX', expected b'HAIR'")


def test_points_flag_required_and_unknown_flags(tmp_path):
    _bad(tmp_path, hair_header(1, 2, 1) + (1).to_bytes(2, "little"),
         "say the file has no points array")
    _bad(tmp_path, hair_header(1, 2, 2 | 64, dseg=1) + f32(PTS[:2]),
         r"flags 0x42 have unknown bit\(s\) 0x40")


@pytest.mark.parametrize("cut, what, need, found", [
    (128 + 1, "segments array", 4, 1),
    (132 + 59, "points array", 60, 59),
    (132 + 60 + 3, "thickness array", 20, 3),
    (132 + 60 + 40 + 12, "colors array", 60, 12),
])
def test_truncated_arrays_say_bytes_expected_and_found(tmp_path, cut, what, need, found):
    msg = _bad(tmp_path, full_hair_bytes()[:cut], f"truncated: the {what}")
    assert f"needs {need} bytes" in msg and f"found {found}" in msg


def test_counts_disagree(tmp_path):
    body = (2).to_bytes(2, "little") + (1).to_bytes(2, "little") + f32(PTS)
    _bad(tmp_path, hair_header(2, 6, 3) + body, "counts disagree: the segments array gives 5 "
         "points .* the header says 6")
    _bad(tmp_path, hair_header(2, 5, 2, dseg=2) + f32(PTS), "counts disagree: 2 strands of the "
         "default 2 segments give 6 points")


def test_trailing_bytes(tmp_path):
    _bad(tmp_path, full_hair_bytes() + b"\0" * 7, r"7 unexpected byte\(s\) after the data "
         r"\(expected 292 bytes in all, found 299\)")
    _bad(tmp_path, data_file([PTS]) + b"xx", r"2 unexpected byte\(s\)", name="bad.data")


def test_truncated_data_files(tmp_path):
    good = data_file([PTS[:3], PTS[3:]])
    _bad(tmp_path, good[:2], "the strand count needs 4 bytes, found 2", name="a.data")
    _bad(tmp_path, good[:4 + 4 + 36 + 2], "strand 1 of 2: its vertex count needs 4 bytes at "
         "offset 44, found 2", name="b.data")
    _bad(tmp_path, good[:-5], "strand 1 of 2: its 2 vertices need 24 bytes at offset 48, "
         "found 19", name="c.data")
    _bad(tmp_path, struct.pack("<i", -3), r"strand count is negative \(-3\)", name="d.data")
    _bad(tmp_path, struct.pack("<ii", 1, 0), "strand 0: vertex count 0", name="e.data")


def test_non_finite_values_name_strand_and_vertex(tmp_path):
    pts = PTS.copy()
    pts[4, 1] = np.nan
    _bad(tmp_path, hair_header(2, 5, 3) + struct.pack("<2H", 2, 1) + f32(pts),
         "strand 1, vertex 1: point is not finite")
    _bad(tmp_path, data_file([PTS[:3], pts[3:]]), "strand 1, vertex 1: point is not finite",
         name="nan.data")
    th = THICK.copy()
    th[2] = np.inf
    _bad(tmp_path, hair_header(2, 5, 7) + struct.pack("<2H", 2, 1) + f32(PTS) + f32(th),
         "strand 0, vertex 2: thickness is not finite")
    th[2] = -1.0
    _bad(tmp_path, hair_header(2, 5, 7) + struct.pack("<2H", 2, 1) + f32(PTS) + f32(th),
         "strand 0, vertex 2: thickness is negative")


def test_coincident_points_name_strand_and_vertices(tmp_path):
    pts = PTS.copy()
    pts[2] = pts[1]
    data = hair_header(2, 5, 3) + struct.pack("<2H", 2, 1) + f32(pts)
    _bad(tmp_path, data, r"strand 0: vertices 1 and 2 coincide \(1 zero-length edge")
    h = read_hair(tmp_path / "bad.hair", allow_coincident=True)
    assert h.zero_length_edges().tolist() == [[0, 1]]
    # the last point of one strand equal to the first of the next is no zero-length edge
    pts = PTS.copy()
    pts[3] = pts[2]
    path = tmp_path / "touch.data"
    path.write_bytes(data_file([pts[:3], pts[3:]]))
    assert read_hair(path).zero_length_edges().shape == (0, 2)


def test_writer_refuses_what_the_format_cannot_hold(tmp_path):
    long = Hair.from_strands([np.c_[np.arange(65537.0), np.zeros(65537), np.zeros(65537)]])
    with pytest.raises(ValueError, match="strand 0 has 65536 segments; the .hair format holds at "
                       "most 65535"):
        write_hair(tmp_path / "l.hair", long)
    with pytest.raises(ValueError, match="info is 89 bytes in UTF-8; the .hair header holds 88"):
        write_hair(tmp_path / "i.hair", sample_hair(info="x" * 89))
    with pytest.raises(ValueError, match="segments_array=False needs strands of equal length"):
        write_hair(tmp_path / "s.hair", sample_hair(), segments_array=False)
    assert list(tmp_path.iterdir()) == []                      # nothing was written


# ---------------------------------------------------------------------------------- atomic
def test_failed_write_leaves_the_old_file_and_no_partial_output(tmp_path, monkeypatch):
    path = tmp_path / "keep.data"
    write_hair(path, sample_hair())
    before = path.read_bytes()

    def half_then_fail(label, hair, scale):
        def gen():
            yield struct.pack("<i", hair.n_strands)
            raise OSError("disk full")
        return gen()

    monkeypatch.setattr(hairfile, "_data_chunks", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_hair(path, Hair.from_strands([PTS]))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.data"]
    # a failure of the final rename: same outcome, and a new file is never created
    monkeypatch.undo()

    def no_replace(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(atomic.os, "replace", no_replace)
    with pytest.raises(OSError, match="rename failed"):
        write_hair(path, Hair.from_strands([PTS]))
    with pytest.raises(OSError, match="rename failed"):
        write_hair(tmp_path / "new.hair", Hair.from_strands([PTS]))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.data"]


def test_write_into_a_missing_folder_names_the_file(tmp_path):
    with pytest.raises(OSError, match="missing/h.hair"):
        write_hair(tmp_path / "missing" / "h.hair", sample_hair())


def test_written_file_permissions_follow_the_umask(tmp_path):
    path = write_hair(tmp_path / "p.hair", sample_hair())
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


# ---------------------------------------------------------------------------------- container
def test_container_queries():
    h = Hair.from_strands([PTS[:3], PTS[3:]])
    assert h.n_strands == 2 and h.vertex_counts.tolist() == [3, 2]
    np.testing.assert_allclose(h.lengths(), [0.5 + np.hypot(0.5, 0.25), 0.75], rtol=1e-15)
    np.testing.assert_array_equal(h.strand(-1), PTS[3:])
    assert [len(s) for s in h.strands()] == [3, 2]
    sub = h.subset([1, 0])
    np.testing.assert_array_equal(sub.points, np.concatenate([PTS[3:], PTS[:3]]))
    np.testing.assert_array_equal(h.subset([-1]).points, PTS[3:])
    assert Hair(np.zeros((0, 3)), [0]).lengths().shape == (0,)
    kept, idx = Hair.from_strands([PTS[:3], PTS[3:4], PTS[3:]]).drop_short(2)
    assert idx.tolist() == [0, 2] and kept.vertex_counts.tolist() == [3, 2]
    with pytest.raises(IndexError, match="strand 2 does not exist"):
        h.strand(2)


def test_container_checks():
    with pytest.raises(ValueError, match="strand 1 has 0 points"):
        Hair(PTS, [0, 3, 3, 5])
    with pytest.raises(ValueError, match="offsets must start at 0 and end at the number of "
                       r"points \(5\)"):
        Hair(PTS, [0, 3, 4])
    bad = PTS.copy()
    bad[3, 0] = np.inf
    with pytest.raises(ValueError, match="strand 1, vertex 0: point is not finite"):
        Hair(bad, [0, 3, 5])
    with pytest.raises(ValueError, match=r"colors must have shape \(5, 3\)"):
        Hair(PTS, [0, 3, 5], colors=np.zeros(5))


# ---------------------------------------------------------------------------------- scenes
MAT = Material(young_modulus=3e9, density=1300.0, radius=4e-5)


def test_to_scene_radii_roots_and_rest_shape():
    th = [np.full(3, 1e-4), np.array([2e-4, 1e-4, 5e-5])]
    h = Hair.from_strands([PTS[:3], PTS[:3] + [0, 0, 1]], thickness=th)
    scene = h.to_scene(material=MAT)
    assert len(scene.strands) == 2
    np.testing.assert_allclose(scene.strands[1].radius, th[1] / 2, rtol=1e-15)
    np.testing.assert_array_equal(scene.strands[1].rest_points, PTS[:3] + [0, 0, 1])
    assert scene.strands[1].name == "hair 1"
    assert len(scene.frames) == 2 and len(scene.frame_attachments) == 2
    free = h.to_scene(material=MAT, clamp_roots=False, use_thickness=False)
    assert len(free.frame_attachments) == 0
    np.testing.assert_array_equal(free.strands[0].radius, MAT.contact_radius)
    dflt = Hair.from_strands([PTS[:3]], default_thickness=3e-4).to_scene(material=MAT)
    np.testing.assert_allclose(dflt.strands[0].radius, 1.5e-4, rtol=1e-15)


def test_short_strands_refused_or_skipped():
    h = Hair.from_strands([PTS[:3], PTS[3:4], PTS[3:], PTS[:3] + 1.0])
    with pytest.raises(ValueError, match=r"strand 1 has 1 point\(s\); simulation needs at least "
                       r"3 \(2 strand\(s\) are this short"):
        h.to_scene(material=MAT)
    from strandlab import SceneBuilder

    b = SceneBuilder()
    handles = h.add_to(b, material=MAT, skip_short=True)
    assert handles.tolist() == [0, -1, -1, 1]
    scene = b.build()
    assert [s.name for s in scene.strands] == ["hair 0", "hair 3"]
    assert h.add_to(SceneBuilder(), material=MAT, min_vertices=2,
                    skip_short=True).tolist() == [0, -1, 1, 2]
    # a skipped strand's coincident points do not matter
    both = Hair.from_strands([PTS[:3], np.zeros((2, 3))])
    assert both.add_to(SceneBuilder(), material=MAT, skip_short=True).tolist() == [0, -1]


def test_scene_refuses_coincident_points_and_zero_thickness():
    pts = PTS[:3].copy()
    pts[2] = pts[1]
    with pytest.raises(ValueError, match=r"strand 1: vertices 1 and 2 coincide"):
        Hair.from_strands([PTS[:3], pts]).to_scene(material=MAT)
    h = Hair.from_strands([PTS[:3]], thickness=[[1e-4, 0.0, 1e-4]])
    with pytest.raises(ValueError, match="strand 0, vertex 1: thickness 0"):
        h.to_scene(material=MAT)
    assert len(h.to_scene(material=MAT, use_thickness=False).strands) == 1
