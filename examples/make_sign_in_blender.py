"""Model the sign of ``examples/sign.toml`` in Blender and export it with Blender's own OBJ
exporter, with its default axes (y-up), as a user would from *File > Export > Wavefront (.obj)*.
Run it in Blender (or a Python with the ``bpy`` module)::

    blender --background --factory-startup --python examples/make_sign_in_blender.py -- \\
        examples/sign.obj

Three objects, each a part of the mesh (docs/mixed.md, "From a modelling tool"): ``base``,
Blender's cube primitive (a solid: its closed surface is filled with tetrahedra when read);
``stand``, loose edges up from a corner of the cube's top and out along a horizontal arm (a
rod, bent at the corner); ``banner``, a grid of quads lying level along the arm (a cloth shell
that shares the arm's vertices: it swings down from them).
"""
import sys

import bpy

out = sys.argv[sys.argv.index("--") + 1] if "--" in sys.argv else sys.argv[1]
bpy.ops.wm.read_factory_settings(use_empty=True)


def add(name, verts, edges, faces):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, edges, faces)
    mesh.update()
    bpy.context.scene.collection.objects.link(bpy.data.objects.new(name, mesh))


bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.0, 0.0, 0.1))
bpy.context.object.name = "base"
up = [(0.1, 0.1, 0.2 + 0.2 * k) for k in range(5)]              # the pole, 0.8 m
arm = [(0.1 + 0.1 * k, 0.1, 1.0) for k in range(1, 7)]          # the arm, 0.6 m
add("stand", up + arm, [(k, k + 1) for k in range(len(up) + len(arm) - 1)], [])
nx, ny = 5, 4                                   # the banner, 0.5 x 0.4 m, clear of the pole
grid = [(0.2 + 0.1 * i, 0.1 + 0.1 * j, 1.0) for j in range(ny + 1) for i in range(nx + 1)]
quads = [(j * (nx + 1) + i, j * (nx + 1) + i + 1, (j + 1) * (nx + 1) + i + 1,
          (j + 1) * (nx + 1) + i) for j in range(ny) for i in range(nx)]
add("banner", grid, [], quads)
bpy.ops.wm.obj_export(filepath=out, export_materials=False)
