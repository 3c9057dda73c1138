// The pennant of examples/pennant.toml, a Gmsh script: open it in Gmsh to see or change the
// model; strandlab has Gmsh mesh it when the scene file is loaded. Lengths in metres.
//
// - "grip": a 0.15 x 0.04 x 0.04 block (a physical volume: tetrahedra);
// - "rod": a line along x from inside the grip (x = 0.03) through its end face to x = 0.6,
//   three curves in one physical group; the one inside the grip is embedded in its volume,
//   the point where the rod leaves it in its end face (the tetrahedra's edges run along the
//   rod: a curve connection);
// - "pennant": a 0.2 x 0.12 rectangle hanging in the plane y = 0 from the rod's last curve,
//   its top edge (shared: a curve connection), meshed in quadrilaterals (strandlab cuts each
//   into two triangles);
// - "clamp": the grip's face at x = 0, a physical surface that no material makes a part: the
//   scene file holds its vertices by name.
SetFactory("OpenCASCADE");

grip = 0.15;  side = 0.04;                 // the grip's length and its square section's side
start = 0.03;  tip = 0.6;                  // where the rod starts (inside the grip), its tip
flag = 0.4;  drop = 0.12;                  // where the pennant starts along the rod, its drop

Box(1) = {0, -side / 2, -side / 2, grip, side, side};   // faces: 1 at x = 0, 2 at x = grip
Point(101) = {start, 0, 0};
Point(102) = {grip, 0, 0};
Point(103) = {flag, 0, 0};
Point(104) = {tip, 0, 0};
Point(105) = {tip, 0, -drop};
Point(106) = {flag, 0, -drop};
Line(101) = {101, 102};                    // the rod inside the grip
Line(102) = {102, 103};                    // between the grip and the pennant
Line(103) = {103, 104};                    // along the pennant's top edge
Line(104) = {104, 105};
Line(105) = {105, 106};
Line(106) = {106, 103};
Curve Loop(101) = {103, 104, 105, 106};
Plane Surface(101) = {101};

Curve{101} In Volume{1};
Point{102} In Surface{2};
Recombine Surface{101};
Mesh.MeshSizeMax = 0.025;

Physical Volume("grip", 1) = {1};
Physical Curve("rod", 2) = {101, 102, 103};
Physical Surface("pennant", 3) = {101};
Physical Surface("clamp", 4) = {1};
