"""Re-exports `redstring.testing.factories`, where the shared factories now live."""

from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

__all__ = ["OTHER_TENANT", "TENANT", "make_entity", "make_relationship"]
