"""Running one HLO program on many devices at once, collectives included (mirrors what XLA's
HloEvaluator cannot do alone: the SPMD execution of a partitioned module).

`evaluate_spmd(module, per_device_args, num_devices)` runs the entry computation once per
device, each device in its own thread with its own evaluator (evaluator.py's interpreter
loop). Everything but the collectives runs independently; at a collective, each device
leaves its operands at a rendezvous and waits for the other members of its group (see
collectives.py for which devices meet), then computes its own result from theirs. Because
every device follows its own control flow, collectives inside while loops, conditionals
and calls meet as they do in XLA: the n-th execution of an instruction on one device meets
the n-th execution of it on the others. A device that never arrives (the programs
diverged) is reported after `timeout` seconds instead of hanging.

Threads rather than one lock-step loop over all devices because the loop would have to
re-implement while and conditional for devices whose predicates differ; threads reuse the
single-device evaluator as it is.
"""
from __future__ import annotations

import collections
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.xla.collectives import DeviceLayout, device_groups, permute_pairs
from jaxlite.xla.evaluator import HloEvaluationError
from jaxlite.xla.evaluator import _argument as checked_argument
from jaxlite.xla.evaluator import _copy as copy_value
from jaxlite.xla.evaluator import _Evaluator as SingleDeviceEvaluator
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode

__all__ = ["evaluate_spmd"]

_O = Opcode


class _Abandoned(Exception):
    """Another device failed, so the collective this device waits in will never complete."""


class _Rendezvous:
    """Where the members of a group meet: each leaves its value and takes everyone's."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.lock = threading.Condition()
        self.slots: dict[tuple, dict[int, Any]] = {}
        self.readers: collections.Counter = collections.Counter()
        self.failure: str | None = None

    def fail(self, why: str) -> None:
        with self.lock:
            self.failure = self.failure or why
            self.lock.notify_all()

    def exchange(self, key: tuple, group: tuple[int, ...], device: int,
                 value: Any) -> list[Any]:
        """The values of `group`'s devices, in group order, once all of them have arrived."""
        slot_key = (key, group)
        with self.lock:
            slot = self.slots.setdefault(slot_key, {})
            slot[device] = value
            self.lock.notify_all()
            arrived = self.lock.wait_for(
                lambda: self.failure is not None or len(slot) == len(group), self.timeout)
            if self.failure is not None:
                raise _Abandoned(self.failure)
            if not arrived:
                missing = sorted(set(group) - set(slot))
                raise HloEvaluationError(
                    f"device {device} waited {self.timeout}s at this collective for devices "
                    f"{missing}, which never reached it: the devices' programs diverged "
                    f"(a collective under a condition that differs between devices?)")
            values = [slot[d] for d in group]
            self.readers[slot_key] += 1
            if self.readers[slot_key] == len(group):
                del self.slots[slot_key], self.readers[slot_key]
            return values


class _DeviceEvaluator(SingleDeviceEvaluator):
    """The single-device evaluator of one device, which meets the others at collectives."""

    def __init__(self, device: int, layout: DeviceLayout, rendezvous: _Rendezvous) -> None:
        super().__init__()
        self.device = device
        self.layout = layout
        self.rendezvous = rendezvous
        self.executions: collections.Counter = collections.Counter()

    def _evaluate(self, inst: HloInstruction, ops: list[Any], args: Sequence[Any]) -> Any:
        if inst.opcode.kind is not Kind.COLLECTIVE:
            return super()._evaluate(inst, ops, args)
        if inst.opcode is _O.PARTITION_ID:
            return np.asarray(self.device % self.layout.num_partitions, np.uint32)
        if inst.opcode is _O.REPLICA_ID:
            return np.asarray(self.device // self.layout.num_partitions, np.uint32)
        self.executions[id(inst)] += 1
        key = (id(inst), self.executions[id(inst)])
        if inst.opcode is _O.COLLECTIVE_PERMUTE:
            return self._permute(inst, ops[0], key)
        group = next(g for g in device_groups(inst.opcode.text, inst.attrs, self.layout)
                     if self.device in g)
        values = self.rendezvous.exchange(key, group, self.device, ops)
        return _COMBINE[inst.opcode](self, inst, values, group.index(self.device))

    def _permute(self, inst: HloInstruction, operand: np.ndarray, key: tuple) -> np.ndarray:
        sends = permute_pairs(inst.attrs, self.layout)
        everyone = tuple(range(self.layout.num_devices))
        values = self.rendezvous.exchange(key, everyone, self.device, operand)
        sources = [s for s, t in sends.items() if t == self.device]
        if not sources:
            return np.zeros_like(operand)  # XLA: a device nobody sends to receives zeros
        return np.array(values[sources[0]])

    def reduce(self, inst: HloInstruction, arrays: list[np.ndarray]) -> np.ndarray:
        """`arrays` combined elementwise by `to_apply`, in group order."""
        total = arrays[0]
        for array in arrays[1:]:
            (total,) = self.apply(inst.called[0], [total, array])
        return np.asarray(total).astype(arrays[0].dtype, copy=False)


def _dimension(inst: HloInstruction) -> int:
    dims = inst.attr("dimensions")
    return int(dims[0]) if isinstance(dims, (tuple, list)) else int(dims)


def _single_or_tuple(results: list[Any]) -> Any:
    return results[0] if len(results) == 1 else tuple(results)


def _all_reduce(ev: _DeviceEvaluator, inst: HloInstruction, values: list[list[Any]],
                position: int) -> Any:
    return _single_or_tuple([ev.reduce(inst, [v[k] for v in values])
                             for k in range(len(values[0]))])


def _all_gather(ev: _DeviceEvaluator, inst: HloInstruction, values: list[list[Any]],
                position: int) -> Any:
    axis = _dimension(inst)
    return _single_or_tuple([np.concatenate([v[k] for v in values], axis=axis)
                             for k in range(len(values[0]))])


def _reduce_scatter(ev: _DeviceEvaluator, inst: HloInstruction, values: list[list[Any]],
                    position: int) -> Any:
    axis, n = _dimension(inst), len(values)
    return _single_or_tuple([np.split(ev.reduce(inst, [v[k] for v in values]), n, axis)[position]
                             for k in range(len(values[0]))])


def _all_to_all(ev: _DeviceEvaluator, inst: HloInstruction, values: list[list[Any]],
                position: int) -> Any:
    n = len(values)
    if inst.attr("dimensions") is None:
        # Tuple form: member i sent me its operand number `position`.
        return tuple(np.array(v[position]) for v in values)
    axis = _dimension(inst)
    blocks = [np.split(v[0], n, axis)[position] for v in values]
    return np.concatenate(blocks, axis=axis)


_COMBINE = {_O.ALL_REDUCE: _all_reduce, _O.ALL_GATHER: _all_gather,
            _O.REDUCE_SCATTER: _reduce_scatter, _O.ALL_TO_ALL: _all_to_all}


def evaluate_spmd(module: HloModule, per_device_args: Sequence[Sequence[Any]],
                  num_devices: int, num_replicas: int = 1, timeout: float = 60.0) -> list[Any]:
    """Run `module`'s entry once per device; returns each device's result, by device id.

    The program runs on `num_devices` devices laid out as `num_replicas` replicas of
    `num_devices // num_replicas` partitions (JAX's jit and shard_map programs: one
    replica, a partition per device, the default; pmap's: a replica per device).
    `per_device_args[d]` are device d's arguments. What XLA runs for a module compiled with
    `num_partitions`; raises `HloEvaluationError` naming the failing device and instruction.
    """
    if num_devices < 1 or num_devices % num_replicas:
        raise ValueError(f"{num_devices} devices cannot hold {num_replicas} replicas of "
                         f"equally many partitions")
    if len(per_device_args) != num_devices:
        raise HloEvaluationError(f"per_device_args holds arguments for "
                                 f"{len(per_device_args)} devices, expected {num_devices}")
    layout = DeviceLayout(num_replicas, num_devices // num_replicas)
    rendezvous = _Rendezvous(timeout)
    entry = module.entry
    results: list[Any] = [None] * num_devices
    errors: dict[int, BaseException] = {}

    def run(device: int) -> None:
        try:
            args = per_device_args[device]
            if len(args) != len(entry.parameters):
                raise HloEvaluationError(f"computation %{entry.name} takes "
                                         f"{len(entry.parameters)} arguments, got {len(args)}")
            checked = [checked_argument(entry, p, p.shape, a)
                       for p, a in zip(entry.parameters, args)]
            with np.errstate(all="ignore"):  # as the single-device evaluator
                value = _DeviceEvaluator(device, layout, rendezvous).run(entry, checked)
            results[device] = copy_value(value)
        except BaseException as error:  # noqa: BLE001 - reported below, by device
            errors[device] = error
            rendezvous.fail(f"device {device} failed: {error}")

    threads = [threading.Thread(target=run, args=(d,), name=f"spmd-device-{d}", daemon=True)
               for d in range(num_devices)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = _first_cause(errors)
    if first is not None:
        device, error = first
        raise HloEvaluationError(f"device {device}: {error}") from error
    return results


def _first_cause(errors: dict[int, BaseException]) -> tuple[int, BaseException] | None:
    """The error that started the failure (not a device abandoned because of it)."""
    for device in sorted(errors):
        if not _caused_by_abandonment(errors[device]):
            return device, errors[device]
    return min(errors.items()) if errors else None


def _caused_by_abandonment(error: BaseException | None) -> bool:
    while error is not None:
        if isinstance(error, _Abandoned):
            return True
        error = error.__cause__
    return False
