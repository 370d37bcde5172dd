"""The events of a streamed answer: ``StreamDelta`` fragments, then ``StreamEnd``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._generated import models


@dataclass(frozen=True)
class StreamDelta:
    """One redacted text fragment."""

    delta: str
    type: Literal["delta"] = "delta"


@dataclass(frozen=True)
class StreamEnd:
    """The closing event: the run's id and its token usage."""

    run_id: str
    usage: models.TokenUsage
    type: Literal["end"] = "end"


StreamEvent = StreamDelta | StreamEnd
