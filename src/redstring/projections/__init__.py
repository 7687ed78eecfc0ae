"""Projections: fold the event log into the graph and vector stores.

The two stores are independent projections of one log, so they can lag each
other; replaying the log rebuilds either without any model call.
"""

from redstring.projections.chunks import ChunkProjection
from redstring.projections.graph import GraphProjection
from redstring.projections.replay import Projection, replay
from redstring.projections.vector import PassageVectorProjection, VectorProjection

__all__ = [
    "ChunkProjection",
    "GraphProjection",
    "PassageVectorProjection",
    "Projection",
    "VectorProjection",
    "replay",
]
