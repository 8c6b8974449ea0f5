"""Train and save a tiny byte-level BPE tokenizer, fully offline (< 1 s).

Benchmark clients need a tokenizer and the model hub is unreachable in the
test environment. This trains a byte-level BPE on a small generated English
corpus with the ``tokenizers`` library and saves it with
``transformers.PreTrainedTokenizerFast.save_pretrained(OUT_DIR)``, which every
client accepts as a local path. With ``--hub-cache CACHE --repo-id ORG/NAME``
it also lays the same files out as a Hugging Face hub cache entry
(``CACHE/models--ORG--NAME/{refs/main,snapshots/<rev>/}``), so a client that
insists on resolving a repo id (aiperf with ``HF_HUB_OFFLINE=1``) finds it
without any network.

Run it with a client's virtualenv (it needs ``tokenizers`` and
``transformers``)::

    .venvs/aiperf/bin/python tests/clients/make_tokenizer.py OUT_DIR \
        [--hub-cache CACHE --repo-id local/tiny]
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

WORDS = (
    "the a and of to in is that it was for on are with as his they be at one "
    "have this from or had by word but what some we can out other were all "
    "there when up use your how said an each she which do their time if will "
    "way about many then them write would like so these her long make thing "
    "see him two has look more day could go come did number sound no most "
    "people my over know water than call first who may down side been now "
    "find token latency budget server request prompt output model queue "
    "decode prefill memory bandwidth compute promise percentile measure"
).split()
SPECIAL = "<|endoftext|>"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def corpus(lines: int = 4000, seed: int = 1234) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        n = rng.randint(5, 25)
        words = [rng.choice(WORDS) for _ in range(n)]
        words[0] = words[0].capitalize()
        out.append(" ".join(words) + rng.choice([".", ",", "?", "!", ";"]))
    return out


def build(out_dir: Path, vocab_size: int = 512) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=SPECIAL,
        eos_token=SPECIAL,
        unk_token=SPECIAL,
        pad_token=SPECIAL,
        model_max_length=32768,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out_dir))


def lay_out_hub_cache(src: Path, cache: Path, repo_id: str) -> Path:
    org, name = repo_id.split("/", 1)
    entry = cache / f"models--{org}--{name}"
    snap = entry / "snapshots" / REVISION
    snap.mkdir(parents=True, exist_ok=True)
    (entry / "refs").mkdir(parents=True, exist_ok=True)
    (entry / "refs" / "main").write_text(REVISION)
    for f in src.iterdir():
        if f.is_file():
            shutil.copy2(f, snap / f.name)
    return snap


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--vocab-size", type=int, default=512)
    ap.add_argument("--hub-cache", type=Path, default=None)
    ap.add_argument("--repo-id", default="local/tiny")
    args = ap.parse_args(argv)
    build(args.out_dir, args.vocab_size)
    print(f"tokenizer: {args.out_dir}")
    if args.hub_cache is not None:
        snap = lay_out_hub_cache(args.out_dir, args.hub_cache, args.repo_id)
        print(f"hub cache: {snap} ({args.repo_id})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
