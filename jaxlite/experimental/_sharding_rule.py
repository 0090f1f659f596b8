"""Shardy sharding rules of `custom_partitioning` (mirrors `SdyShardingRule`, `ArrayMapping`,
`CompoundFactor` and `BATCHING` of `jax.experimental.custom_partitioning`).

A rule names a factor for each dimension of each operand and result, einsum-style:
"i j, j k -> i k". A dimension may be a compound of factors, written "(i j)", whose sizes
must then be given; a leading "..." (or "...2", a numbered group) stands for batching
dimensions. The rule is checked as JAX checks it; on jaxlite's one device it is recorded
for the partitioner of the scale-out issue and otherwise unused.
"""
from __future__ import annotations

from typing import Any

__all__ = ["ArrayMapping", "BATCHING", "CompoundFactor", "SdyShardingRule",
           "str_to_sdy_sharding_rule"]

BATCHING: str = "\u2026"  # the ellipsis character, as JAX's constant


def _check_factor_name(factor: str) -> None:
    if not factor[0].isalpha():
        raise ValueError(f"Factor names have to start with a letter, but got '{factor[0]}'")
    for char in factor[1:]:
        if not (char == "_" or char.isdigit() or char.isalpha()):
            raise ValueError(f"Unknown character '{char}'")


def _is_batching(factor: str) -> bool:
    return factor[:1] == BATCHING and (len(factor) == 1 or factor[1:].isdigit())


class CompoundFactor(tuple):
    """A dimension made of two or more factors, as "(i j)" in a rule string."""

    def __new__(cls, *factors: str) -> "CompoundFactor":
        if len(factors) < 2:
            raise ValueError("A compound factor should contain at least two factors")
        for factor in factors:
            if not isinstance(factor, str):
                raise ValueError(f"Each element of CompoundFactor must be a str, but got "
                                 f"{type(factor)}")
            if _is_batching(factor):
                raise ValueError("Ellipsis can't be used in a compound factor")
            _check_factor_name(factor)
        return super().__new__(cls, factors)


class ArrayMapping(tuple):
    """The factors of one operand's or result's dimensions: names, `CompoundFactor`s, and
    possibly `BATCHING` first."""

    def __new__(cls, *dim_mappings: Any) -> "ArrayMapping":
        for i, dim in enumerate(dim_mappings):
            if not isinstance(dim, (str, CompoundFactor)):
                raise ValueError("Each element of ArrayMapping must be a str or "
                                 f"CompoundFactor, but got {type(dim)}")
            if isinstance(dim, str):
                if _is_batching(dim):
                    if i != 0:
                        raise ValueError(
                            "Ellipsis can only be used at the beginning of a dimension")
                else:
                    _check_factor_name(dim)
        return super().__new__(cls, dim_mappings)


class SdyShardingRule:
    """A Shardy sharding rule: the mappings of the operands and results, the factors that
    are reductions, need replication or are permutations, and the sizes of the factors that
    appear only inside compound dimensions."""

    def __init__(self, operand_mappings: tuple[ArrayMapping, ...],
                 result_mappings: tuple[ArrayMapping, ...], *,
                 reduction_factors: tuple[str, ...] = (),
                 need_replication_factors: tuple[str, ...] = (),
                 permutation_factors: tuple[str, ...] = (), **factor_sizes: int) -> None:
        whole = _factors_and_whether_whole(operand_mappings + result_mappings)
        _check_sizes(whole, factor_sizes)
        special: set[str] = set()
        for kind, factors in (("reduction_factors", reduction_factors),
                              ("need_replication_factors", need_replication_factors),
                              ("permutation_factors", permutation_factors)):
            _check_special(kind, factors, whole, special)
        self.operand_mappings = operand_mappings
        self.result_mappings = result_mappings
        self.factor_sizes = factor_sizes
        self.reduction_factors = reduction_factors
        self.need_replication_factors = need_replication_factors
        self.permutation_factors = permutation_factors

    def __str__(self) -> str:
        special = "".join(f" {kind}={factors}" for kind, factors in (
            ("reduction_factors", self.reduction_factors),
            ("need_replication_factors", self.need_replication_factors),
            ("permutation_factors", self.permutation_factors)) if factors)
        return (f"SdyShardingRule({self.operand_mappings}, {self.result_mappings}, "
                f"{self.factor_sizes}{special})")

    __repr__ = __str__


def _factors_and_whether_whole(mappings: tuple[ArrayMapping, ...]) -> dict[str, bool]:
    """Each factor of the rule, mapped to whether it is a whole dimension somewhere."""
    whole: dict[str, bool] = {}
    for mapping in mappings:
        for dim in mapping:
            if isinstance(dim, CompoundFactor):
                for factor in dim:
                    whole.setdefault(factor, False)
            else:
                whole[dim] = True
    return whole


def _check_sizes(whole: dict[str, bool], factor_sizes: dict[str, int]) -> None:
    for factor in factor_sizes:
        if factor not in whole:
            raise ValueError(f"Factor {factor} is not used in the rule, but size is provided")
    for factor, is_whole in whole.items():
        if not is_whole and factor not in factor_sizes:
            raise ValueError(f"Factor {factor} is only used in compound factors; must "
                             "specify its size")
        if is_whole and factor in factor_sizes:
            raise ValueError(f"Factor {factor} represents a whole dimension; do not specify "
                             "its size")


def _check_special(kind: str, factors: Any, whole: dict[str, bool], seen: set[str]) -> None:
    if not isinstance(factors, tuple):
        raise ValueError(f"{kind} must be a tuple of factors")
    if len(set(factors)) != len(factors):
        raise ValueError(f"{kind} contains duplicated factors")
    for factor in factors:
        if factor not in whole:
            raise ValueError(f"Factor {factor} in {kind} is not used in the rule")
        if factor in seen:
            raise ValueError(f"Factor {factor} can only be in one of the reduction, need "
                             "replication, or permutation factor sets.")
        seen.add(factor)


def str_to_sdy_sharding_rule(rule: str, *, reduction_factors: tuple[str, ...] = (),
                             need_replication_factors: tuple[str, ...] = (),
                             permutation_factors: tuple[str, ...] = (),
                             **factor_sizes: int) -> SdyShardingRule:
    """The `SdyShardingRule` a rule string such as "i j, j k -> i k" describes."""
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a str, but got {type(rule)}")
    if not all(isinstance(size, int) for size in factor_sizes.values()):
        raise TypeError(f"factor_sizes must be a dict of str to int, but got {factor_sizes}")
    if BATCHING in rule:
        raise ValueError(f"Unknown character '{BATCHING}'")
    rule = rule.replace("...", BATCHING)
    if "." in rule:
        raise ValueError("Character '.' must be used inside ellipsis '...'")
    sides = rule.split("->")
    if len(sides) != 2:
        raise ValueError(f"There is no -> in rule: '{rule}'")
    return SdyShardingRule(_RuleSide(sides[0]).parse(), _RuleSide(sides[1]).parse(),
                           reduction_factors=reduction_factors,
                           need_replication_factors=need_replication_factors,
                           permutation_factors=permutation_factors, **factor_sizes)


class _RuleSide:
    """A reader of one side of a rule string: comma-separated arrays of dimensions."""

    def __init__(self, text: str) -> None:
        self.text = " ".join(text.split())
        self.arrays: list[ArrayMapping] = []
        self.dims: list[Any] = []
        self.name: str | None = None
        self.compound: list[str] | None = None

    def parse(self) -> tuple[ArrayMapping, ...]:
        if not self.text:
            return (ArrayMapping(),)
        i = 0
        while i < len(self.text):
            char = self.text[i]
            i += 1
            if char == BATCHING:
                i = self._batching(i)
            elif char in "(), ":
                self._separator(char)
            elif char == "_" or char.isalnum():
                if self.name is None and char.isdigit():
                    raise ValueError(
                        f"Factor names have to start with a letter, but got '{char}'")
                self.name = char if self.name is None else self.name + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if self.compound is not None:
            raise ValueError(f"Brackets are not balanced in rule: '{self.text}'")
        self._end_name()
        self.arrays.append(ArrayMapping(*self.dims))
        return tuple(self.arrays)

    def _batching(self, i: int) -> int:
        if self.name is not None or self.compound is not None or self.dims:
            raise ValueError("Ellipsis can only be used at the beginning of a dimension")
        start = i
        while i < len(self.text) and self.text[i].isdigit():
            i += 1
        group = str(int(self.text[start:i])) if i > start else "0"
        self.dims.append(BATCHING + group)
        return i

    def _end_name(self) -> None:
        if self.name is not None:
            (self.dims if self.compound is None else self.compound).append(self.name)
            self.name = None

    def _separator(self, char: str) -> None:
        self._end_name()
        if char == "(":
            if self.compound is not None:
                raise ValueError("Compound factors should be one level, nested brackets are "
                                 "not allowed")
            self.compound = []
        elif char == ")":
            if self.compound is None:
                raise ValueError("Brackets are not balanced")
            if len(self.compound) <= 1:
                raise ValueError("Brackets should contain at least two factors")
            self.dims.append(CompoundFactor(*self.compound))
            self.compound = None
        elif char == ",":
            self.arrays.append(ArrayMapping(*self.dims))
            self.dims = []
