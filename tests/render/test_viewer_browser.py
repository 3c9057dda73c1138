"""The viewer's pages in a real browser (headless Chromium driven by Playwright): the strands
appear where the camera puts them, the frame slider scrubs, the gravity control stops the fall
(measured on the server), the Step button steps, and a vertex handle dragged with the mouse
moves its vertex."""
import shutil
import socket
import time
from io import BytesIO
from pathlib import Path

import numpy as np
import playwright.sync_api as sync_api
import pytest
import viser  # noqa: F401

import strandlab as sl
from strandlab.render.camera import Camera
from strandlab.sim.runner import Simulation, simulate
from strandlab.sim.shapes import line

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():     # .ci/run installs it: a missing browser is a failure
    pytest.fail(f"no system Chromium at {CHROMIUM} (apt-get install chromium)", pytrace=False)

from PIL import Image  # noqa: E402

from strandlab.render.viewer import view_live, view_run  # noqa: E402

SIZE = (800, 600)
DT = 1.0 / 60.0


def rope(*, clamp: bool, n: int = 10):
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    mat = sl.Material(young_modulus=1e6, density=1000.0, radius=0.005)
    s = b.add_strand(line((-0.25, 0, 1), (0.25, 0, 1), n), material=mat)
    if clamp:
        b.attach_to_frame(s, b.add_frame((-0.25, 0, 1)), end=0)
    return Simulation(name="rope", scene=b.build(), dt=DT, frames=12)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--enable-unsafe-swiftshader"])
        yield b
        b.close()


def open_page(browser, viewer, text: str):
    page = browser.new_page(viewport={"width": SIZE[0], "height": SIZE[1]})
    page.goto(viewer.url)
    page.get_by_text(text).first.wait_for(timeout=20000)
    page.wait_for_timeout(1500)                  # the first frames of the 3-D view
    return page


def screenshot(page) -> np.ndarray:
    return np.asarray(Image.open(BytesIO(page.screenshot())).convert("RGB")).astype(int)


def project(viewer, points) -> np.ndarray:
    """Pixels (column, row) of world points with the page's initial camera."""
    cam = viewer.server.initial_camera
    fov = float(np.degrees(cam.fov))
    view = Camera(position=tuple(cam.position), focal_point=tuple(cam.look_at),
                  view_angle=fov).resolve(np.zeros((2, 3)), SIZE)
    return np.rint(view.project(points, SIZE)).astype(int)


def visible(px) -> np.ndarray:
    """Pixels inside the image and off the control panel (on the right) and the notice (top
    left)."""
    c, r = px[:, 0], px[:, 1]
    inside = (c > 3) & (c < SIZE[0] - 3) & (r > 3) & (r < SIZE[1] - 3)
    return inside & (c < 455) & ~((c < 330) & (r < 170))


def strand_at(img, px) -> np.ndarray:
    """For each pixel, whether a pixel of the strand's colour (the first of tab10, a blue:
    blue well above red on the white page) is within 2 px of it."""
    out = []
    for c, r in px:
        win = img[r - 2:r + 3, c - 2:c + 3].reshape(-1, 3)
        out.append(bool(np.any(win[:, 2] - win[:, 0] > 50)))
    return np.array(out)


def number_input(page, label: str):
    return page.locator(f"xpath=//label[starts-with(normalize-space(.), '{label}')]/ancestor::"
                        "div[contains(@class, 'mantine-Flex-root')][1]//input[contains(@class, "
                        "'mantine-NumberInput-input')]").first


def wait_for(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_playback_page_shows_the_strands_and_scrubs(browser, tmp_path):
    traj = simulate(rope(clamp=True), out=tmp_path / "trajectory.h5")
    first, last = np.asarray(traj.positions[0]), np.asarray(traj.positions[-1])
    traj.close()
    with view_run(tmp_path, port=free_port(), play=False) as viewer:
        page = open_page(browser, viewer, "frame 0 / 12")
        px = project(viewer, first)
        on = visible(px)
        on[0] = False                             # the clamp's axes are drawn there too
        assert on.sum() >= 5
        img = screenshot(page)
        assert strand_at(img, px[on]).all()
        off = px + np.array([0, 60])              # 60 px below the straight rope: background
        assert not strand_at(img, off[visible(off)]).any()
        slider = number_input(page, "frame")
        slider.fill("12")
        slider.press("Enter")
        wait_for(lambda: viewer.shown == 12)
        page.wait_for_timeout(500)
        img = screenshot(page)
        px_last = project(viewer, last)
        sagged = visible(px_last) & (np.linalg.norm(px_last - px, axis=1) > 12) & on
        assert sagged.sum() >= 3                  # the rope fell far enough to tell
        assert strand_at(img, px_last[sagged]).all()
        assert not strand_at(img, px[sagged]).any()
        page.close()


def test_live_page_gravity_control_stops_the_fall_and_step_steps(browser):
    with view_live(rope(clamp=False), port=free_port(), paused=True, realtime=False) as viewer:
        live = viewer.sim
        page = open_page(browser, viewer, "paused")
        z = []

        def steps(n):
            for _ in range(n):
                done = live.snapshot().steps
                page.get_by_role("button", name="Step").click()
                wait_for(lambda done=done: live.snapshot().steps == done + 1)
                z.append(float(np.mean(live.snapshot().positions[:, 2])))

        steps(3)
        fall = (z[2] - 2 * z[1] + z[0]) / DT ** 2
        assert fall == pytest.approx(-9.81, rel=0.02)
        box = number_input(page, "gravity")
        box.fill("0")
        box.press("Enter")
        wait_for(lambda: not np.any(live.gravity))
        steps(3)
        assert abs((z[5] - 2 * z[4] + z[3]) / DT ** 2) < 0.05
        assert live.snapshot().steps == 6
        page.close()


def test_live_page_vertex_dragged_with_the_mouse_moves(browser):
    with view_live(rope(clamp=True), port=free_port(), paused=True, realtime=False) as viewer:
        live = viewer.sim
        grabs = []
        grab = live.grab
        live.grab = lambda k: (grabs.append(k), grab(k))
        page = open_page(browser, viewer, "paused")
        start = live.snapshot().positions.copy()
        px = project(viewer, start)
        k = int(np.flatnonzero(visible(px))[-1])  # the outermost vertex off the panel
        assert k >= 5
        c, r = (float(v) for v in px[k])
        page.mouse.move(c, r)
        page.mouse.down()
        for i in range(1, 11):                    # 80 px up, in steps the page sees
            page.mouse.move(c, r - 8 * i)
            page.wait_for_timeout(50)
        wait_for(lambda: live.grabbed is not None)
        target = live._target.copy()
        live.step(40)
        wait_for(lambda: live.snapshot().steps >= 40)
        page.mouse.up()
        assert grabs == [k]
        assert target[2] > start[k, 2] + 0.05         # the pointer went up: so did the target
        moved = live.snapshot().positions[k]
        assert moved[2] > start[k, 2] + 0.02
        assert np.linalg.norm(moved - target) < 0.6 * np.linalg.norm(start[k] - target)
        wait_for(lambda: live.grabbed is None)
        page.close()
