"""Configuration flags, as `jax.config` holds them.

Owns every option jaxlite reads, and is the only module that reads environment variables.
An option has one process-wide value, which `update` sets for every thread; a context
manager (`override`) changes it for a block of code in the current thread or task only.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class _Option:
    name: str
    default: Any
    help: str
    validate: Callable[[Any], Any]


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _as_optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _as_promotion_mode(value: Any) -> str:
    mode = str(getattr(value, "value", value))
    if mode not in ("standard", "strict"):
        raise ValueError(f"jax_numpy_dtype_promotion must be 'standard' or 'strict', got "
                         f"{value!r}")
    return mode


def _as_rank_promotion(value: Any) -> str:
    mode = str(value)
    if mode not in ("allow", "warn", "raise"):
        raise ValueError(f"new enum value must be in ['allow', 'warn', 'raise'], got {value} "
                         f"of type {type(value)}.")
    return mode


def _as_legacy_prng_key(value: Any) -> str:
    mode = str(getattr(value, "value", value))
    if mode not in ("allow", "warn", "error"):
        raise ValueError(f"{value!r} is not a valid LegacyPrngKeyState")
    return mode


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f"new int config value must be None or of type int, got {value} of "
                         f"type {type(value)}")
    return value.__index__()


class Config:
    """The set of named options (mirrors `jax.config`).

    Read an option as an attribute (`config.jax_enable_x64`) or with `read`; change it for
    the whole process with `update(name, value)` (every thread sees it, as in JAX) or, for a
    block of code in the current thread or task, with the context manager `override`.
    `trace_context()` gives the values of the options that change tracing, as one tuple.

    An option's value is its process-wide value unless the current context overrides it: a
    `ContextVar` per option holds the overrides, read with the global value as its default.
    Readers (`reader`, `trace_context`) are `functools.partial` objects of that read, whose
    bound default is replaced in place (`__setstate__`) when `update` changes the global
    value, so a jit call reads an option in one C-level call (~50 ns).
    """

    def __init__(self) -> None:
        self._options: dict[str, _Option] = {}
        self._global: dict[str, Any] = {}
        self._values: dict[str, contextvars.ContextVar] = {}  # the overrides
        self._readers: dict[str, list[functools.partial]] = {}
        self._lock = threading.Lock()
        # The options that change what tracing produces. While no context overrides one of
        # them, `trace_context` returns their global values as a prepared tuple; while some
        # thread does, every thread computes the tuple from its own reads.
        self._trace_options: tuple[str, ...] = ()
        self._tracing_overrides = 0
        self.trace_context = functools.partial(_same, ())

    def define(self, name: str, default: Any, help: str,
               validate: Callable[[Any], Any] = lambda v: v,
               affects_tracing: bool = False) -> None:
        """Declare an option; `affects_tracing` marks one whose value changes the jaxpr a
        function traces to (dtypes, promotion, checks), so it joins `trace_context()`."""
        with self._lock:
            self._options[name] = _Option(name, default, help, validate)
            self._global[name] = validate(default)
            self._values[name] = contextvars.ContextVar(name)
            self._readers[name] = []
            if affects_tracing:
                self._trace_options += (name,)
            self._refresh_trace_context()

    def _var(self, name: str) -> contextvars.ContextVar:
        try:
            return self._values[name]
        except KeyError:
            known = ", ".join(sorted(self._options))
            raise AttributeError(
                f"Unrecognized config option: {name} (jaxlite.config knows: {known})"
            ) from None

    def read(self, name: str) -> Any:
        return self._var(name).get(self._global[name])

    def reader(self, name: str) -> Callable[[], Any]:
        """A function of no arguments that reads option `name` as `read` does, for code
        that reads an option on every call (a jit call reads three: ~0.3 us each by name)."""
        var = self._var(name)
        with self._lock:
            read = functools.partial(var.get, self._global[name])
            self._readers[name].append(read)
        return read

    def _computed_trace_context(self) -> tuple:
        return tuple(self.read(n) for n in self._trace_options)

    def _refresh_trace_context(self) -> None:
        """Point `trace_context` at the prepared global tuple, or at the per-read computation
        while an override of a tracing option is active anywhere (call with the lock)."""
        if self._tracing_overrides:
            state = (self._computed_trace_context, (), None, None)
        else:
            values = tuple(self._global[n] for n in self._trace_options)
            state = (_same, (values,), None, None)
        self.trace_context.__setstate__(state)

    def update(self, name: str, value: Any) -> None:
        """Set option `name` to `value` for the rest of the program, in every thread (like
        `jax.config.update`); a block overriding it (`override`) keeps its own value."""
        var = self._var(name)
        value = self._options[name].validate(value)
        with self._lock:
            self._global[name] = value
            for read in self._readers[name]:
                read.__setstate__((var.get, (value,), None, None))
            if name in self._trace_options:
                self._refresh_trace_context()
        for listener in _listeners:
            listener(name)

    @contextlib.contextmanager
    def override(self, name: str, value: Any) -> Iterator[None]:
        """Set option `name` to `value` inside a `with` block only (this thread or task)."""
        var = self._var(name)
        value = self._options[name].validate(value)
        tracing = name in self._trace_options
        if tracing:
            self._count_tracing_override(+1)
        token = var.set(value)
        try:
            yield
        finally:
            var.reset(token)
            if tracing:
                self._count_tracing_override(-1)

    def _count_tracing_override(self, step: int) -> None:
        with self._lock:
            self._tracing_overrides += step
            self._refresh_trace_context()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @property
    def values(self) -> dict[str, Any]:
        """Every option's current value, by name (mirrors `jax.config.values`)."""
        return {name: self.read(name) for name in self._values}

    def parse_flags_with_absl(self) -> None:
        """Set options from `--jax_name=value`, `--jax_name` and `--nojax_name` arguments in
        `sys.argv` (mirrors `jax.config.parse_flags_with_absl`, which reads only JAX's flags
        before absl parses the rest); the arguments stay for absl or argparse."""
        for argument in sys.argv[1:]:
            if not argument.startswith("--"):
                continue
            name, has_value, raw = argument[2:].partition("=")
            negated = not has_value and name.startswith("no") and name[2:] in self._options
            if negated:
                self.update(name[2:], False)
            elif name in self._options:
                self.update(name, raw if has_value else True)

    def config_with_absl(self) -> None:
        """Read options from the command line as absl flags would (mirrors
        `jax.config.config_with_absl`); jaxlite parses `sys.argv` itself."""
        self.parse_flags_with_absl()


def _same(value: Any) -> Any:
    return value


# Called with an option's name after `update`; caches that depend on options register here.
_listeners: list[Callable[[str], None]] = []

config = Config()
config.define("jax_enable_x64", _env_bool("JAX_ENABLE_X64", False),
              "Allow 64-bit dtypes; when off, 64-bit inputs become 32-bit.", _as_bool,
              affects_tracing=True)
config.define("jax_disable_jit", _env_bool("JAX_DISABLE_JIT", False),
              "Run jit-decorated functions eagerly, op by op.", _as_bool)
# Only JAXLITE_PLATFORMS: a JAX_PLATFORMS=cpu meant for JAX would name a backend jaxlite may
# not have yet, and leave it without any.
config.define("jax_platforms", os.environ.get("JAXLITE_PLATFORMS"),
              "Comma-separated backends in order of preference (e.g. 'interpreter,cpu'): the "
              "first that starts is the default, and only listed ones may be used.",
              _as_optional_str)
config.define("jax_numpy_rank_promotion",
              os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"),
              "Whether implicit rank promotion is 'allow'ed, 'warn'ed about or 'raise'd.",
              _as_rank_promotion, affects_tracing=True)
config.define("jax_numpy_dtype_promotion",
              os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard"),
              "Implicit dtype promotion: 'standard' (JAX's lattice) or 'strict' (only Python "
              "scalars promote; mixing two different dtypes raises TypePromotionError).",
              _as_promotion_mode, affects_tracing=True)
config.define("jax_default_matmul_precision", None,
              "Default precision of dot products.", _as_optional_str, affects_tracing=True)
config.define("jax_debug_nans", _env_bool("JAX_DEBUG_NANS", False),
              "Raise FloatingPointError when an operation produces a NaN (a jitted function's "
              "NaN output is traced back to its operation by re-running it op by op).",
              _as_bool, affects_tracing=True)
config.define("jax_debug_infs", _env_bool("JAX_DEBUG_INFS", False),
              "As jax_debug_nans, for infinities.", _as_bool, affects_tracing=True)
config.define("jax_legacy_prng_key", os.environ.get("JAX_LEGACY_PRNG_KEY", "allow"),
              "What jaxlite.random does with a raw uint32 key: 'allow' it, 'warn' or 'error'.",
              _as_legacy_prng_key)
config.define("jax_random_seed_offset", int(os.environ.get("JAX_RANDOM_SEED_OFFSET", "0")),
              "Added to every seed a key is made from (random.key, random.PRNGKey).", _as_int,
              affects_tracing=True)
config.define("jax_compilation_cache_dir",
              os.environ.get("JAXLITE_COMPILATION_CACHE_DIR",
                             os.environ.get("JAX_COMPILATION_CACHE_DIR")),
              "Folder for the persistent cache of compiled code (None: the per-user default "
              "folder, jaxlite_default_cache_dir; '': no persistent cache).", _as_optional_str)
config.define("jaxlite_default_cache_dir",
              os.path.join(os.environ.get("XDG_CACHE_HOME")
                           or os.path.join(os.path.expanduser("~"), ".cache"), "jaxlite"),
              "The persistent cache's folder where jax_compilation_cache_dir is not set (per "
              "user, as pip and numba do); '' or None turns the default cache off.",
              _as_optional_str)
def _as_traceback_filtering(value: Any) -> str:
    mode = str(value)
    if mode not in _TRACEBACK_MODES:
        raise ValueError(f"new enum value must be in {list(_TRACEBACK_MODES)}, got {value} of "
                         f"type {type(value)}.")
    return mode


_TRACEBACK_MODES = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")
config.define("jax_traceback_filtering", os.environ.get("JAX_TRACEBACK_FILTERING", "auto"),
              "Remove jaxlite's internal frames from the tracebacks of errors raised through "
              "jit, grad, vmap and the other entry points: 'off' keeps them; "
              "'quiet_remove_frames' removes them without a note; 'auto', 'remove_frames' "
              "and 'tracebackhide' remove them and add a note saying so.",
              _as_traceback_filtering)
config.define("jax_log_compiles", _env_bool("JAX_LOG_COMPILES", False),
              "Log (logger 'jaxlite', level WARNING) each compilation of a jit-ted function "
              "with its name, backend and time; compiles longer than 1 s also report each "
              "phase on logger 'jax._src.dispatch'.", _as_bool)
config.define("jaxlite_verify_hlo", _env_bool("JAXLITE_VERIFY_HLO", False),
              "Run the HLO verifier on each module after the pass pipeline, when compiling.",
              _as_bool)
config.define("jaxlite_dump_dir", os.environ.get("JAXLITE_DUMP_DIR"),
              "Folder where the compiler writes the module after every pass, and (cpu "
              "backend) each program's buffer assignment, LLVM IR before and after -O3 and "
              "assembly.", _as_optional_str)


def _as_thread_count(value: Any) -> int:
    count = int(value)
    if count < 1:
        raise ValueError(f"jaxlite_cpu_threads must be a positive number of threads, got "
                         f"{value!r}")
    return count


config.define("jaxlite_cpu_threads",
              os.environ.get("JAXLITE_CPU_THREADS") or len(os.sched_getaffinity(0)),
              "Threads the cpu backend splits large kernels over (default: the cores this "
              "process may run on).", _as_thread_count)


config.define("jaxlite_spmd_partitioner",
              os.environ.get("JAXLITE_SPMD_PARTITIONER", "1").lower() not in ("0", "false"),
              "jit calls on arrays placed over a mesh of several devices run as one "
              "partitioned program per device (sharding propagation, the SPMD partitioner, "
              "collectives between devices). Off: they compute global values and only place "
              "the results.", bool)


# The cpu backend's device count, once it has started (then the option is fixed, as in JAX).
_CPU_DEVICES_STARTED: list[int] = []


def _as_cpu_device_count(value: Any) -> int:
    count = int(value)
    if count == 0 or count < -1:
        raise ValueError(f"jax_num_cpu_devices must be a positive number of devices or -1 "
                         f"(take it from XLA_FLAGS), got {value!r}")
    if _CPU_DEVICES_STARTED:
        raise RuntimeError("jax_num_cpu_devices config should be updated before backends are "
                           "initialized i.e. before any JAX operation is executed. You should "
                           "initialize this config immediately after `import jax`.")
    return count


config.define("jax_num_cpu_devices",
              os.environ.get("JAXLITE_NUM_CPU_DEVICES")
              or os.environ.get("JAX_NUM_CPU_DEVICES") or -1,
              "Number of CPU devices of the cpu backend (environment: JAXLITE_NUM_CPU_DEVICES). "
              "-1: the count of XLA_FLAGS's --xla_force_host_platform_device_count, else 1. "
              "Read when the backend starts; set it before the first operation.",
              _as_cpu_device_count)


def _forced_host_device_count() -> int | None:
    """N of `--xla_force_host_platform_device_count=N` in XLA_FLAGS (what scripts written for
    JAX set to fake several CPU devices), or None."""
    for flag in os.environ.get("XLA_FLAGS", "").split():
        name, _, value = flag.partition("=")
        if name == "--xla_force_host_platform_device_count" and value.strip().isdigit():
            return max(int(value), 1)
    return None


def start_cpu_devices() -> int:
    """The number of CPU devices a starting cpu backend makes (`jax_num_cpu_devices`, else
    XLA_FLAGS's forced host device count, else 1); the option is fixed from now on."""
    count = config.read("jax_num_cpu_devices")
    if count == -1:
        count = _forced_host_device_count() or 1
    if not _CPU_DEVICES_STARTED:
        _CPU_DEVICES_STARTED.append(count)
    return _CPU_DEVICES_STARTED[0]


def enable_x64(new_val: bool = True) -> contextlib.AbstractContextManager:
    """Context manager that turns 64-bit types on (or off) for a block (mirrors
    `jax.enable_x64`)."""
    return config.override("jax_enable_x64", new_val)


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager:
    """Context manager that runs jit-decorated functions op by op (mirrors `jax.disable_jit`)."""
    return config.override("jax_disable_jit", disable)
