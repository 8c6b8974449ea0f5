"""Container images -> (engine, version): ``vllm/vllm-openai:v0.11.0`` -> ("vllm", "0.11.0")."""

from __future__ import annotations

import re

#: image repositories (without registry) whose entrypoint is the engine's server
IMAGES = {
    "vllm/vllm-openai": "vllm",
    "vllm-project/vllm-openai": "vllm",
    "lmsysorg/sglang": "sglang",
    "sgl-project/sglang": "sglang",
    "huggingface/text-generation-inference": "tgi",
    "nvidia/tritonserver": "trtllm",
}

_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:\.post\d+)?)(?:[-+].*)?$")


def engine_of_image(image: str) -> tuple[str, str | None] | None:
    """The engine an image runs and the version its tag names (None when the tag is no version)."""
    if not isinstance(image, str) or not image or len(image) > 500:
        return None
    ref = image.split("@", 1)[0]
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    parts = repo.split("/")
    if len(parts) > 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # a registry host
    name = "/".join(parts[-2:]) if len(parts) >= 2 else parts[-1]
    engine = IMAGES.get(name)
    if engine is None:
        return None
    m = _VERSION.match(tag)
    return engine, (m.group(1) if m and engine != "trtllm" else None)
