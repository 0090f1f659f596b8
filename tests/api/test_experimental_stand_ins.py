"""`jax.experimental.layout` and `jax.experimental.hijax`: the names libraries define
themselves with at import time, and clear errors where jaxlite cannot follow."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import hijax, layout


def test_row_major_layouts_are_accepted_and_others_refused():
    x = jnp.ones((2, 3))
    assert layout.with_layout_constraint(x, layout.Layout((0, 1))) is x
    with pytest.raises(NotImplementedError, match="not row-major"):
        layout.with_layout_constraint(x, layout.Layout((1, 0)))
    fmt = layout.Format(layout.Layout((0, 1)), None)
    assert fmt.layout.major_to_minor == (0, 1) and layout.Format() == layout.Format(None, None)


def test_hijax_names_define_classes_and_refuse_use():
    class MyPrimitive(hijax.HiPrimitive):
        def impl(self, x):
            return x

    prim = MyPrimitive("my_prim")
    with pytest.raises(NotImplementedError, match="high-level types"):
        prim.bind(jnp.ones(2))

    class MyAval(hijax.MutableHiType):
        pass

    assert isinstance(MyAval(), jax.core.AbstractValue)

    class Box:
        pass

    hijax.register_hitype(Box, lambda b: None)
    assert Box in hijax.HITYPES
    with pytest.raises(TypeError):
        jax.jit(lambda b: b)(Box())
    prop = hijax.aval_property(fget=lambda self: 3)
    assert prop.fget(None) == 3 and hijax.aval_method(len).fun is len
    np.testing.assert_array_equal(hijax.instantiate_zeros(jnp.ones(2)), [1, 1])
