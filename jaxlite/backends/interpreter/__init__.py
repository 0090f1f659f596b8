"""The interpreter backend: HLO evaluated instruction by instruction with numpy.

Slow and obviously right: the oracle that every pass and every other backend is checked
against, and the backend that is always there. Its platform is "interpreter" (not "cpu":
the LLVM backend will take that name), its one device is `InterpreterDevice(id=0)` in host
memory, and its buffers wrap numpy arrays without copying.
"""
from jaxlite.backends.interpreter.buffer import InterpreterBuffer, InterpreterDevice
from jaxlite.backends.interpreter.client import InterpreterClient, make_client
from jaxlite.backends.interpreter.executable import InterpreterExecutable

PLATFORM = "interpreter"

__all__ = ["InterpreterBuffer", "InterpreterClient", "InterpreterDevice",
           "InterpreterExecutable", "PLATFORM", "make_client"]
