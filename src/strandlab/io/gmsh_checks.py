"""What is wrong with a Gmsh ``.msh`` file, in words, where meshio's reader only fails
(:mod:`.simplicial`): meshio reads a section's lines by the count the section announces and
indexes its nodes by number, so a file cut off, a count that is wrong or an element naming a
node the file lacks come out as ``IndexError: list index out of range`` and the like.

:func:`check_physical_names` is run on every Gmsh file before meshio reads it (meshio keeps one
group per name: a name two groups share would lose one of them silently);
:func:`gmsh_problem` only once meshio has failed, to say why: it reads the file's sections
line by line (ASCII files, format 2 and 4; of a binary file only what is text);
:func:`gmsh_node_number` gives a node's number as the file writes it, for messages.
"""
from __future__ import annotations

import shlex

__all__ = ["check_physical_names", "gmsh_problem", "gmsh_node_number", "section_text",
           "DIM_WORD"]

#: Gmsh's words for the dimensions of its physical groups.
DIM_WORD = {0: "point", 1: "curve", 2: "surface", 3: "volume"}


def section_text(data: bytes, name: str):
    """The text of the section ``$name`` of the Gmsh file ``data`` (between its header line and
    ``$Endname``), whether it is closed, and the line its header is on (from 1); None where the
    file has no such section."""
    marker = f"${name}".encode()
    at = data.find(marker)
    while at >= 0:
        after = at + len(marker)
        if (at == 0 or data[at - 1] in b"\r\n") and data[after:after + 1] in (b"", b"\r",
                                                                             b"\n", b" "):
            break
        at = data.find(marker, after)
    if at < 0:
        return None
    start = data.find(b"\n", at)
    start = len(data) if start < 0 else start + 1
    end = data.find(f"$End{name}".encode(), start)
    line = data.count(b"\n", 0, at) + 1
    body = data[start:len(data) if end < 0 else end]
    return body.decode("latin-1"), end >= 0, line


def check_physical_names(data: bytes, name) -> None:
    """Refuse the ``$PhysicalNames`` section of the Gmsh file ``data`` (named ``name`` in
    messages) where its count is not its number of names, a line is no ``dim tag "name"``, one
    name is given to two groups (a curve and a surface both ``"pole"``: meshio would keep one)
    or one group has two names; a file without the section passes."""
    got = section_text(data, "PhysicalNames")
    if got is None:
        return
    text, closed, line = got
    if not closed:
        raise ValueError(f"{name}: $PhysicalNames (line {line}) has no $EndPhysicalNames")
    rows = [r for r in text.splitlines() if r.strip()]
    try:
        count = int(rows[0]) if rows else 0
    except ValueError:
        raise ValueError(f"{name}: $PhysicalNames (line {line}) begins with {rows[0].strip()!r},"
                         " not its number of names") from None
    if count != len(rows) - 1:
        raise ValueError(f"{name}: $PhysicalNames (line {line}) announces {count} names but "
                         f"lists {max(len(rows) - 1, 0)}")
    groups, named = {}, {}
    for row in rows[1:]:
        try:
            dim, tag, text = shlex.split(row)[:3]
            key = (int(dim), int(tag))
        except ValueError:
            raise ValueError(f"{name}: $PhysicalNames: {row.strip()!r} is not a physical name "
                             "(dimension, tag, \"name\")") from None
        if key in groups and groups[key] != text:
            raise ValueError(f"{name}: $PhysicalNames names the physical {_group(key)} twice, "
                             f"{groups[key]!r} and {text!r} (a group has one name)")
        if text in named and named[text] != key:
            raise ValueError(f"{name}: two physical groups are named {text!r} in "
                             f"$PhysicalNames: the {_group(named[text])} and the "
                             f"{_group(key)} (a name names one group: rename one of them)")
        groups[key], named[text] = text, key


def _group(key) -> str:
    """``"curve 1"``: a physical group by its (dimension, tag)."""
    return f"{DIM_WORD.get(key[0], f'dimension-{key[0]}')} {key[1]}"


def gmsh_node_number(data: bytes, k: int):
    """The number the Gmsh ASCII file ``data`` gives its ``k``-th node (from 0, in the file's
    order, as meshio reads them), or None where it cannot be told (a binary file)."""
    got = section_text(data, "Nodes")
    try:
        if got is None or not _format(data)[1]:
            return None
        words = got[0].split()
        if _format(data)[0] < 4:
            return int(words[1 + 4 * k])
        at, seen = 4, 0
        for _ in range(int(words[0])):
            n = int(words[at + 3])
            if k < seen + n:
                return int(words[at + 4 + k - seen])
            at, seen = at + 4 + 4 * n, seen + n
    except (ValueError, IndexError):
        return None
    return None


def _format(data: bytes) -> tuple[float, bool]:
    """(version, whether ASCII) from the ``$MeshFormat`` section of ``data``; ValueError where
    it is unreadable."""
    got = section_text(data, "MeshFormat")
    if got is None:
        raise ValueError("no $MeshFormat")
    words = got[0].split()
    return float(words[0]), int(words[1]) == 0


def gmsh_problem(data: bytes):
    """What is wrong with the Gmsh file ``data`` (its bytes) that meshio failed to read: a
    sentence, or None where nothing is found here (a binary file's data, a file that is not
    Gmsh's at all: meshio's own message is then all there is)."""
    if not data.strip():
        return "the file is empty"
    lines = data.decode("latin-1").splitlines()
    if lines[0].strip() != "$MeshFormat":
        return None
    try:
        version, ascii_ = _format(data)
    except (ValueError, IndexError):
        return "its $MeshFormat section is not a version, file type and data size"
    if not ascii_:
        return None
    sections, why = _sections(lines)
    if why:
        return why
    cut = [n for n, (*_, c) in sections.items() if c and n not in ("Nodes", "Elements")]
    if cut:
        return _ends_inside(cut[0], _body(lines, *sections[cut[0]][:2]), None, "")
    if "Nodes" not in sections:
        return "the file has no $Nodes section"
    tags, why = (_nodes_v2 if version < 4 else _nodes_v4)(lines, *sections["Nodes"])
    if why:
        return why
    if "Elements" not in sections:
        return "the file has no $Elements section"
    if sections["Elements"][0] < sections["Nodes"][0]:
        return "its $Elements section comes before its $Nodes section"
    elements = sections["Elements"]
    return (_elements_v2 if version < 4 else _elements_v4)(lines, *elements, tags)


def _sections(lines: list):
    """``{name: (header line index, end line index, cut)}`` of the sections of a Gmsh ASCII
    file's ``lines`` (``cut``: the file ends before the section's end, which is then the
    file's); and a sentence for a section that another begins inside, else None."""
    out, name, start = {}, None, 0
    for i, line in enumerate(lines):
        s = line.strip()
        if name is None:
            if s.startswith("$"):
                name, start = s[1:], i
            elif s:
                return out, f"line {i + 1}, {s[:40]!r}, is in no section"
        elif s == f"$End{name}":
            out.setdefault(name, (start, i, False))
            name = None
        elif s.startswith("$"):
            return out, (f"${name} (line {start + 1}) has no $End{name} before {s} (line "
                         f"{i + 1})")
    if name is not None:
        out.setdefault(name, (start, len(lines), True))
    return out, None


def _body(lines: list, start: int, end: int) -> list:
    """The non-blank lines of a section, as (line number from 1, text) pairs."""
    return [(i + 1, lines[i].strip()) for i in range(start + 1, end) if lines[i].strip()]


def _ends_inside(section: str, body: list, count, word: str) -> str:
    """The sentence for a file cut off inside ``section``, after the lines ``body``."""
    at = body[-1][0] if body else None
    where = f", at line {at}" if at else ""
    if count is None:
        return f"the file ends inside ${section}{where}: it is cut off"
    return (f"the file ends inside ${section}{where}, {max(len(body) - 1, 0)} lines into the "
            f"{count} {word} it announces: it is cut off")


def _count(body: list, section: str, what: str):
    """The count a section's first line announces; ValueError with the sentence otherwise."""
    if not body:
        raise ValueError(f"${section} is empty: it does not say how many {what} it has")
    try:
        return [int(w) for w in body[0][1].split()]
    except ValueError:
        raise ValueError(f"${section} (line {body[0][0]}) begins with {body[0][1][:40]!r}, "
                         f"not how many {what} it has") from None


def _nodes_v2(lines, start, end, cut):
    """The node numbers of a format-2 ``$Nodes`` section, and a sentence for what is wrong
    with it (else None)."""
    body = _body(lines, start, end)
    try:
        count = _count(body, "Nodes", "nodes")[0]
    except ValueError as exc:
        return None, str(exc)
    if cut:
        return None, _ends_inside("Nodes", body, count, "nodes")
    tags = set()
    for at, text in body[1:]:
        words = text.split()
        try:
            if len(words) != 4:
                raise ValueError
            tags.add(int(words[0]))
            [float(w) for w in words[1:]]
        except ValueError:
            return None, (f"$Nodes, line {at}: {text[:60]!r} is not a node: a node is its "
                          "number and three coordinates")
    if count != len(body) - 1:
        return None, f"$Nodes announces {count} nodes but lists {len(body) - 1}"
    return tags, None


def _nodes_v4(lines, start, end, cut):
    """The node numbers of a format-4 ``$Nodes`` section, and a sentence for what is wrong
    with it (else None)."""
    body = _body(lines, start, end)
    try:
        head = _count(body, "Nodes", "nodes")
        blocks, count = head[0], head[1]
    except (ValueError, IndexError) as exc:
        return None, str(exc) if isinstance(exc, ValueError) else "$Nodes has no header"
    if cut:
        return None, _ends_inside("Nodes", body, count, "nodes")
    tags, i = set(), 1
    try:
        for _ in range(blocks):
            n = int(body[i][1].split()[3])
            tags.update(int(w) for _, t in body[i + 1:i + 1 + n] for w in t.split())
            i += 1 + 2 * n
    except (ValueError, IndexError):
        return None, f"$Nodes: its blocks do not match the {count} nodes it announces"
    if len(tags) != count or i != len(body):
        return None, f"$Nodes: its blocks do not match the {count} nodes it announces"
    return tags, None


def _types() -> dict:
    """Gmsh element type -> (meshio's cell type, its number of nodes)."""
    try:
        from meshio._common import num_nodes_per_cell
        from meshio.gmsh.common import _gmsh_to_meshio_type
    except ImportError:         # another meshio: the types are not checked
        return {}
    return {k: (t, num_nodes_per_cell[t]) for k, t in _gmsh_to_meshio_type.items()
            if t in num_nodes_per_cell}


def _missing_node(element, at: int, nodes, tags: set):
    """The sentence for the first of ``nodes`` not among the file's node numbers ``tags``."""
    for n in nodes:
        if n not in tags:
            numbered = f"numbered {min(tags)} to {max(tags)}" if tags else "none"
            return (f"element {element} (line {at}) names node {n}, which the file does not "
                    f"have: its {len(tags)} nodes are {numbered}")
    return None


def _elements_v2(lines, start, end, cut, tags: set):
    """A sentence for what is wrong with a format-2 ``$Elements`` section (its nodes ``tags``),
    else None."""
    body = _body(lines, start, end)
    try:
        count = _count(body, "Elements", "elements")[0]
    except ValueError as exc:
        return str(exc)
    if cut:
        return _ends_inside("Elements", body, count, "elements")
    types, first, odd = _types(), None, None
    for at, text in body[1:]:
        try:
            words = [int(w) for w in text.split()]
            number, kind, ntags = words[:3]
        except ValueError:
            return (f"$Elements, line {at}: {text[:60]!r} is not an element: an element is "
                    "its number, type, tags and nodes")
        if types and kind not in types:
            return f"element {number} (line {at}) has type {kind}, which meshio does not read"
        if types and len(words) != 3 + ntags + types[kind][1]:
            return (f"element {number} (line {at}) has {len(words)} numbers where a "
                    f"{types[kind][0]} element of {ntags} tags has "
                    f"{3 + ntags + types[kind][1]}")
        if ntags == 0:
            return (f"element {number} (line {at}) has no tags, so no physical group: "
                    "strandlab takes each element's part from its physical group; give every "
                    "element one")
        missing = _missing_node(number, at, words[3 + ntags:], tags)
        if missing:
            return missing
        first = first or (number, ntags)
        if odd is None and ntags != first[1]:
            odd = (number, at, ntags)
    if count != len(body) - 1:
        return f"$Elements announces {count} elements but lists {len(body) - 1}"
    if odd is not None:
        return (f"element {odd[0]} (line {odd[1]}) has {odd[2]} tags where element "
                f"{first[0]} has {first[1]} (meshio reads files whose elements have as many "
                "tags each)")
    return None


def _elements_v4(lines, start, end, cut, tags: set):
    """A sentence for what is wrong with a format-4 ``$Elements`` section (its nodes ``tags``),
    else None."""
    body = _body(lines, start, end)
    try:
        head = _count(body, "Elements", "elements")
        blocks, count = head[0], head[1]
    except (ValueError, IndexError) as exc:
        return str(exc) if isinstance(exc, ValueError) else "$Elements has no header"
    if cut:
        return _ends_inside("Elements", body, count, "elements")
    types, i, seen = _types(), 1, 0
    try:
        for _ in range(blocks):
            kind, n = (int(w) for w in body[i][1].split()[2:4])
            if types and kind not in types:
                return (f"$Elements, line {body[i][0]}: element type {kind}, which meshio "
                        "does not read")
            for at, text in body[i + 1:i + 1 + n]:
                words = [int(w) for w in text.split()]
                if types and len(words) != 1 + types[kind][1]:
                    return (f"element {words[0]} (line {at}) has {len(words) - 1} nodes where "
                            f"a {types[kind][0]} element has {types[kind][1]}")
                missing = _missing_node(words[0], at, words[1:], tags)
                if missing:
                    return missing
            i, seen = i + 1 + n, seen + n
    except (ValueError, IndexError):
        return f"$Elements: its blocks do not match the {count} elements it announces"
    if seen != count or i != len(body):
        return f"$Elements: its blocks do not match the {count} elements it announces"
    return None
