"""What Blender sees in a file: a probe run inside Blender's Python (``bpy``).

It imports files with Blender's own importers and reports, as JSON, what the scene then holds,
so that an export can be checked against the trajectory it came from.  It imports nothing of
strandlab (Blender's Python does not have it) and runs either in Blender::

    blender --background --factory-startup --python-exit-code 1 \\
        --python blender_probe.py -- jobs.json report.json

or in a Python that has the ``bpy`` module (``pip install bpy``; Python 3.11 for Blender 4.x
and 5.x)::

    python blender_probe.py jobs.json report.json

``jobs.json`` is a list of jobs, each a dict: ``path`` (the file: ``.usd .usda .usdc .usdz``,
``.abc``, ``.obj`` or ``.ply``, picking the importer), ``frames`` (the scene frames at which
to report positions, default ``[scene start]``), ``fps`` (optional: the scene's frame rate set
before importing, as Blender's integer ``fps`` and ``fps_base``), ``options`` (keyword
arguments of the importer, e.g. ``{"up_axis": "Z", "forward_axis": "Y"}`` for OBJ).  Every job
starts from an empty scene (factory settings).

``report.json`` is a list with, per job: ``path``, ``blender`` (version), ``scene``
(``fps`` = fps / fps_base, ``fps_int``, ``fps_base``, ``frame_start``, ``frame_end``,
``unit_scale``, ``length_unit``) and ``objects``: per object ``name``, ``type``, ``parent``,
``modifiers`` and, for geometry, ``frames``: per requested frame (a string key) the evaluated
geometry in world space: ``positions`` [[x, y, z], ...] (Blender's z-up world, scene units),
``radius`` (the ``radius`` point attribute, or None), and the topology: ``curve_sizes`` and
``cyclic`` (curves), ``faces`` (vertex indices of each face) and ``edges`` (meshes).
"""
import json
import sys

IMPORTERS = {".usd": "usd_import", ".usda": "usd_import", ".usdc": "usd_import",
             ".usdz": "usd_import", ".abc": "alembic_import", ".obj": "obj_import",
             ".ply": "ply_import"}


def _arguments(argv):
    """(jobs path, report path): the arguments after ``--`` (Blender) or after the script."""
    args = argv[argv.index("--") + 1:] if "--" in argv else argv[1:]
    if len(args) != 2:
        raise SystemExit("usage: blender_probe.py JOBS.json REPORT.json (after -- in Blender)")
    return args


def _attribute(data, name):
    """The values of a point attribute of evaluated geometry, or None."""
    attr = data.attributes.get(name)
    if attr is None:
        return None
    return [v.value for v in attr.data]


def _world(ob, points):
    m = ob.matrix_world
    return [list(m @ p) for p in points]


def _geometry(ob, depsgraph):
    """Positions (world space), radius and topology of an object's evaluated geometry."""
    ev = ob.evaluated_get(depsgraph)
    if ob.type == "CURVES":
        data = ev.data
        pos = [p.position for p in data.points]
        return {"positions": _world(ev, pos), "radius": _attribute(data, "radius"),
                "curve_sizes": [c.points_length for c in data.curves],
                "cyclic": _attribute(data, "cyclic")}
    if ob.type == "POINTCLOUD":
        data = ev.data
        return {"positions": _world(ev, [p.co for p in data.points]),
                "radius": _attribute(data, "radius")}
    if ob.type == "MESH":
        data = ev.data
        return {"positions": _world(ev, [v.co for v in data.vertices]),
                "radius": _attribute(data, "radius"),
                "faces": [list(f.vertices) for f in data.polygons],
                "edges": [list(e.vertices) for e in data.edges]}
    if ob.type == "CURVE":
        mesh = ev.to_mesh()
        try:
            return {"positions": _world(ev, [v.co for v in mesh.vertices]), "radius": None,
                    "curve_sizes": [len(s.points) + len(s.bezier_points)
                                    for s in ev.data.splines],
                    "edges": [list(e.vertices) for e in mesh.edges]}
        finally:
            ev.to_mesh_clear()
    return None


def _set_fps(scene, fps: float) -> None:
    """Blender's frame rate is an integer ``fps`` divided by ``fps_base``."""
    scene.render.fps = max(1, round(fps))
    scene.render.fps_base = scene.render.fps / fps


def run_job(bpy, job: dict) -> dict:
    """Import one file into an empty scene and report what Blender sees."""
    path = job["path"]
    suffix = path[path.rfind("."):].lower()
    if suffix not in IMPORTERS:
        raise ValueError(f"{path}: no Blender importer for {suffix!r}")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    if job.get("fps"):
        _set_fps(scene, float(job["fps"]))
    result = getattr(bpy.ops.wm, IMPORTERS[suffix])(filepath=path, **job.get("options", {}))
    if "FINISHED" not in result:
        raise RuntimeError(f"{path}: Blender's {IMPORTERS[suffix]} returned {result}")
    scene = bpy.context.scene
    frames = [int(f) for f in job.get("frames") or [scene.frame_start]]
    objects = {ob.name: {"name": ob.name, "type": ob.type,
                         "parent": ob.parent.name if ob.parent else None,
                         "modifiers": [m.type for m in ob.modifiers], "frames": {}}
               for ob in scene.objects}
    for f in frames:
        scene.frame_set(f)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for ob in scene.objects:
            geo = _geometry(ob, depsgraph)
            if geo is not None:
                objects[ob.name]["frames"][str(f)] = geo
    settings = scene.unit_settings
    return {"path": path, "blender": bpy.app.version_string,
            "scene": {"fps": scene.render.fps / scene.render.fps_base,
                      "fps_int": scene.render.fps, "fps_base": scene.render.fps_base,
                      "frame_start": scene.frame_start, "frame_end": scene.frame_end,
                      "unit_scale": settings.scale_length, "length_unit": settings.length_unit},
            "objects": sorted(objects.values(), key=lambda o: o["name"])}


def main(argv) -> None:
    import bpy

    jobs_path, report_path = _arguments(argv)
    with open(jobs_path, encoding="utf-8") as fh:
        jobs = json.load(fh)
    report = [run_job(bpy, job) for job in jobs]
    with open(report_path, "w", encoding="utf-8") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    main(sys.argv)
