"""The backend registry: named backends with priorities and lazy factories (mirrors JAX's
`xla_bridge`: `register_backend_factory`, `backends()`, `get_backend()`, `jax_plugins`).

A backend is registered by name with a priority and a factory, a zero-argument callable
that returns a `Client`. Nothing starts at registration: a factory runs the first time its
backend is asked for, once. A factory that raises is recorded with its reason, and asking
for that backend later raises `RuntimeError` quoting the reason, e.g. for "gpu" without
cupy.

Choice of the default backend: with `jax_platforms` (or the environment variable
`JAXLITE_PLATFORMS`) set to a comma-separated list such as "interpreter,cpu", the first
listed backend that starts; otherwise the registered backend of highest priority that
starts. Only listed backends may be used while the option is set.

Plugins: installed distributions add backends through the entry point group
`jaxlite.backends`. The contract:

- The entry point's name is the backend's name (lowercase), its object a callable `hook`.
- The registry calls `hook(registry)` once, with the `BackendRegistry` doing the discovery.
- The hook either registers its backends itself with `registry.register(name, factory,
  priority=...)` and returns None, or returns a factory, which the registry registers
  under the entry point's name with priority `PLUGIN_PRIORITY`.
- The hook should be cheap: import heavy libraries inside the factory's module, which only
  loads when the factory runs. A hook that fails to load or raises is recorded with its
  reason under the entry point's name.

Plugins are discovered the first time a backend is asked for; `discover_plugins()` looks
again (for distributions added to `sys.path` since).
"""
from __future__ import annotations

import importlib.metadata
import logging
import threading
from dataclasses import dataclass
from typing import Callable

from jaxlite.backends import cpu, gpu, interpreter
from jaxlite.backends.base import Client
from jaxlite.config import config

PLUGIN_GROUP = "jaxlite.backends"

# Higher wins the default. The LLVM CPU backend (`cpu.PRIORITY`) sits above the interpreter,
# which stays registered as the fallback for hosts where llvmlite cannot start; the gpu
# backend (`gpu.PRIORITY`, starting only where CuPy sees a device) sits above both, and a
# plugin that only returns a factory beats them all, as in JAX.
INTERPRETER_PRIORITY = 0
PLUGIN_PRIORITY = 400

BackendFactory = Callable[[], Client]

logger = logging.getLogger("jaxlite")
_PLATFORMS = config.reader("jax_platforms")


@dataclass(frozen=True)
class _Registration:
    name: str
    factory: BackendFactory
    priority: int
    order: int  # registration order: breaks ties between equal priorities


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def parse_platforms(value: str | None) -> list[str]:
    """The backend names of a `jax_platforms` value ("a,b" -> ["a", "b"]; None -> [])."""
    if not value:
        return []
    return [name.strip().lower() for name in value.split(",") if name.strip()]


class BackendRegistry:
    """Backends by name: their factories, the clients that started, the reasons of those
    that did not.

    Parameters
    ----------
    builtins : register jaxlite's own backends (the gpu backend, the default where CuPy
        sees a GPU; the LLVM cpu backend, the default elsewhere; the interpreter below).
    plugin_group : the entry point group searched for plugins.
    """

    def __init__(self, builtins: bool = True, plugin_group: str = PLUGIN_GROUP) -> None:
        self.plugin_group = plugin_group
        self._registrations: dict[str, _Registration] = {}
        self._clients: dict[str, Client] = {}
        self._errors: dict[str, str] = {}
        self._loaded_plugins: set[str] = set()
        self._discovered = False
        self._lock = threading.RLock()
        # The default client per `jax_platforms` setting; valid until a registration changes
        # (started clients and recorded failures never change), so `jit` calls skip the search.
        self._defaults: dict[str | None, Client] = {}
        if builtins:
            self.register(interpreter.PLATFORM, interpreter.make_client,
                          priority=INTERPRETER_PRIORITY)
            cpu.register(self)
            gpu.register(self)

    # ------------------------------------------------------------------- registration

    def register(self, name: str, factory: BackendFactory, priority: int = 0) -> None:
        """Register (or replace, when not yet started) the backend `name`.

        Raises `ValueError` for a backend that has already started or failed: its clients
        and buffers may be in use.
        """
        if not callable(factory):
            raise TypeError(f"register: the factory of backend {name!r} must be a "
                            f"zero-argument callable returning a Client, got {factory!r}.")
        key = name.strip().lower()
        with self._lock:
            if key in self._clients or key in self._errors:
                raise ValueError(f"register: backend {key!r} has already been initialized; "
                                 "register backends before using them.")
            self._registrations[key] = _Registration(key, factory, int(priority),
                                                     len(self._registrations))
            self._defaults.clear()

    def discover_plugins(self) -> list[str]:
        """Load the entry points of `plugin_group` not loaded yet; returns their names."""
        with self._lock:
            self._discovered = True
            loaded = []
            for entry in importlib.metadata.entry_points(group=self.plugin_group):
                name = entry.name.strip().lower()
                if name in self._loaded_plugins:
                    continue
                self._loaded_plugins.add(name)
                loaded.append(name)
                self._load_plugin(name, entry)
            return loaded

    def _load_plugin(self, name: str, entry: importlib.metadata.EntryPoint) -> None:
        try:
            hook = entry.load()
            factory = hook(self)
            if factory is not None:
                self.register(name, factory, priority=PLUGIN_PRIORITY)
        except Exception as error:  # a broken plugin must not break jaxlite
            reason = f"the plugin {entry.value!r} failed to load: {_error_text(error)}"
            self._errors.setdefault(name, reason)
            logger.info("jaxlite: backend plugin %r not available: %s", name, reason)

    # ------------------------------------------------------------------------ queries

    def _ensure_discovered(self) -> None:
        if not self._discovered:
            self.discover_plugins()

    def registered(self) -> list[str]:
        """Registered backend names, highest priority first (started or not)."""
        self._ensure_discovered()
        regs = sorted(self._registrations.values(), key=lambda r: (-r.priority, r.order))
        return [r.name for r in regs]

    def priority(self, name: str) -> int:
        return self._registrations[name.lower()].priority

    def errors(self) -> dict[str, str]:
        """Backends (and plugins) that failed to start, with the reason."""
        self._ensure_discovered()
        return dict(self._errors)

    def allowed(self) -> list[str]:
        """The backends usable now, in order of preference (`jax_platforms`, else priority)."""
        chosen = parse_platforms(config.read("jax_platforms"))
        return chosen if chosen else self.registered()

    def client(self, name: str) -> Client:
        """The client of backend `name`, started on first use.

        Raises `RuntimeError` when it is not registered or failed to start (with the reason).
        """
        key = name.strip().lower()
        self._ensure_discovered()
        with self._lock:
            if key in self._clients:
                return self._clients[key]
            if key in self._errors:
                raise RuntimeError(f"Backend {key!r} failed to initialize: "
                                   f"{self._errors[key]}")
            registration = self._registrations.get(key)
            if registration is None:
                known = ", ".join(self.registered()) or "none"
                raise RuntimeError(f"Unknown backend {key}. Registered backends: {known}.")
            try:
                client = registration.factory()
                if not isinstance(client, Client):
                    raise TypeError(f"the factory returned {client!r}, not a "
                                    "jaxlite.backends.base.Client")
            except Exception as error:  # recorded so that every later use can say why
                self._errors[key] = _error_text(error)
                logger.info("jaxlite: unable to initialize backend %r: %s", key,
                            self._errors[key])
                raise RuntimeError(f"Backend {key!r} failed to initialize: "
                                   f"{self._errors[key]}") from error
            self._clients[key] = client
            return client

    def get_backend(self, platform: str | None = None) -> Client:
        """The client for `platform`, or the default backend's when None.

        Raises `RuntimeError` for an unknown backend, one outside `jax_platforms`, one that
        failed to start, or (default) when no allowed backend starts, giving each reason.
        """
        setting = _PLATFORMS()
        if platform is not None:
            name = platform.strip().lower()
            chosen = parse_platforms(setting)
            if chosen and name not in chosen:
                raise RuntimeError(f"Backend {name!r} is not in the list of platforms "
                                   f"jax_platforms={setting!r} allows; add it there (or to "
                                   "JAXLITE_PLATFORMS) to use it.")
            return self.client(name)
        known = self._defaults.get(setting)
        if known is not None:
            return known
        reasons = []
        with self._lock:  # so that no registration slips between the search and the memo
            for name in self.allowed():
                try:
                    client = self.client(name)
                except RuntimeError as error:
                    reasons.append(str(error))
                    continue
                self._defaults[setting] = client
                return client
        where = f" (jax_platforms={setting!r})" if setting else ""
        raise RuntimeError(f"No backend could be initialized{where}: " + " ".join(reasons))

    def started_default(self) -> Client | None:
        """The default backend's client when a call has already chosen it under the
        current `jax_platforms` setting, else None; starts nothing (eager dispatch asks
        this on every operation)."""
        return self._defaults.get(_PLATFORMS())

    def clear(self) -> None:
        """Forget the started clients and the failures, so that the next use starts each
        backend again (`jax.extend.backend.clear_backends`). Arrays made on the old clients
        keep their data."""
        with self._lock:
            self._clients.clear()
            self._errors.clear()
            self._defaults.clear()

    def started(self) -> list[str]:
        """The names of the backends whose clients have started."""
        return list(self._clients)

    def backends(self) -> dict[str, Client]:
        """Every allowed backend that starts, by name, in order of preference."""
        started = {}
        for name in self.allowed():
            try:
                started[name] = self.client(name)
            except RuntimeError:
                continue  # recorded in errors()
        return started


_DEFAULT = BackendRegistry()


def default_registry() -> BackendRegistry:
    """The registry `jaxlite.devices`, `jit` and `device_put` use."""
    return _DEFAULT


# The default registry's `started_default` (eager dispatch asks it on every operation: a
# bound method spares it a call).
started_default = _DEFAULT.started_default


def register_backend_factory(name: str, factory: BackendFactory, priority: int = 0) -> None:
    """Register a backend in the default registry (mirrors JAX's function of that name)."""
    _DEFAULT.register(name, factory, priority)


def get_backend(platform: str | None = None) -> Client:
    """The client of `platform`, or of the default backend (see `BackendRegistry`)."""
    return _DEFAULT.get_backend(platform)


def backends() -> dict[str, Client]:
    """The backends that start, by name, in order of preference (`jax.extend.backend`)."""
    return _DEFAULT.backends()


def backend_errors() -> dict[str, str]:
    """Backends that could not start, with the reason."""
    return _DEFAULT.errors()


def discover_plugins() -> list[str]:
    """Look for new plugins of the entry point group `jaxlite.backends`."""
    return _DEFAULT.discover_plugins()
