"""What a run says about itself: its date, the serving engine and its version."""

from __future__ import annotations

import math
import re
from typing import Any


_VLLM_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$")


def iso_date(raw: Any) -> str | None:
    """A file's date as ISO 8601, or None when it is not one.

    ``20250530-194738`` (vLLM, local time: no zone) -> ``2025-05-30T19:47:38``;
    a Unix timestamp (number) -> UTC ``...+00:00``; an ISO string is kept.
    """
    import datetime as dt

    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        if not math.isfinite(raw) or not (0 < raw < 1e11):
            return None
        return dt.datetime.fromtimestamp(float(raw), dt.timezone.utc).replace(microsecond=0).isoformat()
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    m = _VLLM_DATE.match(text)
    try:
        if m:
            return dt.datetime(*map(int, m.groups())).isoformat()
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


#: client backend names that are serving engines (others, like "openai", say nothing of it)
ENGINE_BACKENDS = {
    "vllm": "vllm",
    "sglang": "sglang",
    "sglang-native": "sglang",
    "sglang-oai": "sglang",
    "tgi": "tgi",
    "lmdeploy": "lmdeploy",
    "trt": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "deepspeed-mii": "deepspeed-mii",
    "scalellm": "scalellm",
}

#: --metadata / config keys that name the engine version
ENGINE_VERSION_KEYS = ("engine_version", "vllm_version", "sglang_version", "server_version")
