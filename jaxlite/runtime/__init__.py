"""The run-time side of arrays: the `Array` class, eager dispatch of primitives, devices.

`array` holds the concrete array users get back; `dispatch` runs primitives eagerly (numpy
reference rules) and compiled calls; `device` is `device_put`, `devices()` and friends.
"""
