"""Example modules shipped with the package (lowered from JAX by `tools/make_models.py`)."""

from __future__ import annotations

from importlib import resources

__all__ = ["example_names", "example_text"]


def example_names() -> tuple[str, ...]:
    """Names of the bundled examples, e.g. ``("gpt_block",)``."""
    files = resources.files(__name__).iterdir()
    return tuple(sorted(f.name.removesuffix(".mlir") for f in files if f.name.endswith(".mlir")))


def example_text(name: str) -> str:
    """The MLIR text of the bundled example `name` (see `example_names`)."""
    if name not in example_names():
        raise KeyError(f"no bundled example {name!r}; available: {', '.join(example_names())}")
    return (resources.files(__name__) / f"{name}.mlir").read_text()
