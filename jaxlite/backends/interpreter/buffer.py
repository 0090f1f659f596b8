"""The interpreter's device and buffers: host memory, numpy arrays (mirrors PJRT's CPU
device and buffer, without the copy)."""
from __future__ import annotations



from jaxlite.backends.base import HostBuffer, HostDevice


class InterpreterDevice(HostDevice):
    """The interpreter's one device: the host, evaluating HLO with numpy."""

    @property
    def device_kind(self) -> str:
        return "interpreter (numpy on the host)"


class InterpreterBuffer(HostBuffer):
    """A read-only numpy array on the host (the interpreter evaluates numpy arrays directly).

    Parameters
    ----------
    array : the contents; the buffer marks it read-only and keeps it without copying, so
        the caller must hand over an array nobody writes to again.
    device : the device it belongs to.
    """
