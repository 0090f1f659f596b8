"""Tracebacks of errors raised through jaxlite's transformations show the user's frames,
as JAX's do (`jax_traceback_filtering`): jaxlite's machinery (tracing, transformations,
primitives, dispatch) is removed, user-level library frames (`jaxlite.numpy`) are kept, and
a note says how to see everything."""
from __future__ import annotations

import os
import traceback

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.compat._src import traceback_util
from jaxlite.config import config
from jaxlite.core.traceback_filter import NOTE, is_machinery

PACKAGE = os.path.dirname(jax.__file__)


def bad_dot(x):
    return jnp.dot(x, jnp.ones((4, 5)))


CALLS = {
    "jit": lambda: jax.jit(bad_dot)(jnp.ones((3, 3))),
    "jit of grad": lambda: jax.jit(jax.grad(lambda x: bad_dot(x).sum()))(jnp.ones((3, 3))),
    "grad": lambda: jax.grad(lambda x: bad_dot(x).sum())(jnp.ones((3, 3))),
    "vmap": lambda: jax.vmap(bad_dot)(jnp.ones((2, 3, 3))),
    "jacrev": lambda: jax.jacrev(bad_dot)(jnp.ones((3, 3))),
    "vjp": lambda: jax.vjp(bad_dot, jnp.ones((3, 3))),
    "grad of jit": lambda: jax.grad(lambda x: jax.jit(bad_dot)(x).sum())(jnp.ones((3, 3))),
}


def frames_of(call):
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions") as info:
        call()
    return info.value, traceback.extract_tb(info.value.__traceback__)


@pytest.mark.parametrize("name", list(CALLS))
def test_machinery_frames_are_removed(name):
    error, frames = frames_of(CALLS[name])
    files = [f.filename for f in frames]
    assert not [f for f in files if is_machinery(f)], files
    assert any(f.name == "bad_dot" and f.filename == __file__ for f in frames)
    assert frames[-1].filename.startswith(PACKAGE)  # jnp.dot's frame, which raised
    assert NOTE in error.__notes__


def test_off_keeps_every_frame_and_quiet_drops_the_note():
    with config.override("jax_traceback_filtering", "off"):
        error, frames = frames_of(CALLS["grad"])
    assert any(is_machinery(f.filename) for f in frames)
    assert NOTE not in getattr(error, "__notes__", [])
    with config.override("jax_traceback_filtering", "quiet_remove_frames"):
        error, frames = frames_of(CALLS["grad"])
    assert not any(is_machinery(f.filename) for f in frames)
    assert NOTE not in getattr(error, "__notes__", [])


def test_the_note_is_added_once_through_nested_boundaries():
    error, _ = frames_of(lambda: jax.vmap(jax.grad(lambda x: bad_dot(x).sum()))(
        jnp.ones((2, 3, 3))))
    assert error.__notes__.count(NOTE) == 1


def test_libraries_register_their_own_internals(tmp_path):
    library = tmp_path / "mylib"
    library.mkdir()
    (library / "core.py").write_text("def apply(f, x):\n    return f(x)\n")
    namespace: dict = {}
    exec(compile((library / "core.py").read_text(), str(library / "core.py"), "exec"), namespace)
    traceback_util.register_exclusion(str(library))
    try:
        entry = traceback_util.api_boundary(namespace["apply"])
        with pytest.raises(ZeroDivisionError) as info:
            entry(lambda x: 1 / x, 0)
        files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
        assert str(library / "core.py") not in files and __file__ in files
    finally:
        traceback_util._exclude_paths.remove(str(library))


def test_the_option_takes_jax_modes_only():
    assert config.read("jax_traceback_filtering") in ("auto", "off", "remove_frames",
                                                      "quiet_remove_frames", "tracebackhide")
    with pytest.raises(ValueError, match="new enum value must be in"):
        jax.config.update("jax_traceback_filtering", "sometimes")


def test_errors_keep_their_type_message_and_cause():
    def raises_from(x):
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise ValueError("outer") from inner
    with pytest.raises(ValueError, match="outer") as info:
        jax.grad(raises_from)(1.0)
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(KeyboardInterrupt):
        jax.vmap(lambda x: (_ for _ in ()).throw(KeyboardInterrupt()))(np.ones(2))
