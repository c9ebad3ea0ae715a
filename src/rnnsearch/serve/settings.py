"""The server's limits and batching knobs: one frozen pydantic model, the only source of their
defaults. ``rnnsearch serve``'s flags are made from its fields (``cli/serve.py``)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rnnsearch.errors import UsageError


class ServeSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    batching: bool = Field(True, description="gather concurrent requests into one search")
    max_batch: int = Field(32, ge=1, description="sentences per search when batching")
    window_ms: float = Field(5.0, ge=0, description="how long the first waiting request waits for company (ms)")
    max_chars: int = Field(1000, ge=1, description="characters per text")
    max_texts: int = Field(64, ge=1, description="texts per request")
    max_body_bytes: int = Field(256 * 1024, ge=1, description="request body size (bytes)")
    max_queue: int = Field(1024, ge=1, description="sentences waiting for the model; more are refused (503)")
    timeout_s: float = Field(30.0, ge=1, description="seconds per request, from arrival to answer")
    max_beam: int = Field(20, ge=1, description="largest beam a request may ask for")
    threads: int = Field(0, ge=0, description="torch intra-op threads for the model (0 = torch's default)")
    drain_s: float = Field(30.0, ge=0, description="on SIGTERM, seconds to finish accepted requests")
    cors_origins: str = Field("*", description="the web pages' origins whose scripts may call the server (CORS), "
                              "comma-separated: '*' any, as LibreTranslate allows; '' none")

    @classmethod
    def make(cls, **values) -> ServeSettings:
        """Validated settings; a bad value is a UsageError naming the setting."""
        try:
            return cls(**values)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UsageError(f"serve settings: {problems}") from None

    def limits(self) -> dict:
        """The settings, as /health shows them."""
        return self.model_dump()
