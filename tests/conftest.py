"""Settings every test shares."""

from hypothesis import settings

# A shared, loaded machine (CI runs beside other work) can make one example
# slow without anything being wrong; correctness, not speed, is what the
# properties check. Speed is measured in bench/.
settings.register_profile("redstring", deadline=None)
settings.load_profile("redstring")
