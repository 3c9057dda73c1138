"""The creatures of Chang et al. 2019 (strandlab.scenes.mixed_creatures): a kinematic frame
moves the body, the appendages follow through their connections only (docs/mixed.md quotes
the figures)."""
from strandlab.scenes.mixed_creatures import (
    anglerfish_measures,
    jellyfish_measures,
    mixed_anglerfish,
    mixed_jellyfish,
    track_creature,
)


def test_fig7_jellyfish_appendages_follow_the_bell_only_through_their_connections():
    # the bell rocks by +-25 degrees while bobbing.  With the point connections the eye
    # stalks stand on the bell (their chords within 15 degrees of rest in the bell's frame)
    # and the tentacles' root edges turn with it (within 0.5 degree); on ball joints the
    # stalks and their eyeballs fall over (153 degrees) and the tentacles hang plumb,
    # 32 degrees off the bell's frame at the swing's ends
    on = track_creature(mixed_jellyfish(), jellyfish_measures(), steps=100)
    off = track_creature(mixed_jellyfish(connections=False), jellyfish_measures(), steps=100)
    assert on["stalks"][1] < 20.0 and off["stalks"][1] > 90.0
    assert on["tentacles"][1] < 2.0 and off["tentacles"][1] > 20.0


def test_fig17_anglerfish_fins_and_lure_follow_the_head_only_through_their_connections():
    # the head swings +-20 degrees.  With the curve and point connections the pectoral fins
    # keep their angle to the body (within 3.5 degrees) and the antenna holds the lure up, at
    # least 12.5 mm above its root (38.5 mm at rest; the antenna's chord within 25 degrees of
    # rest); without them the fins hinge down (up to 100 degrees) and the antenna and lure
    # fall from its root (to 64 mm below it)
    on = track_creature(mixed_anglerfish(), anglerfish_measures(), steps=100)
    off = track_creature(mixed_anglerfish(connections=False), anglerfish_measures(), steps=100)
    assert on["pectoral"][1] < 10.0 and off["pectoral"][1] > 45.0
    assert on["antenna"][1] < 35.0 and off["antenna"][1] > 90.0
    assert on["lure_height"][0] > 0.005 and off["lure_height"][0] < -0.03
