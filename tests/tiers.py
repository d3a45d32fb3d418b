"""The test tiers, marked where each test is written: `@pytest.mark.slow` puts a test in the slow
tier (`make test-all`, CI), `@pytest.mark.long` as well puts it in the long tier (`make test-long`,
kept out of CI; CONTRIBUTING.md, "Running the tests", says what belongs there). CI runs
`-m "slow and not long"`, which keeps the long tier out only if every long test is also slow:
`tests/conftest.py` refuses a collection holding a test marked long but not slow (`long_not_slow`).
`slow_params` and `long_params` mark single parameters: the fast tier keeps the configurations
that cover a test's code paths, the slow tier the others, the long tier the ones CI can spare."""

from collections.abc import Callable, Collection, Iterable, Sequence

import pytest

ParameterSet = type(pytest.param(None))  # what `pytest.param` returns


def long_params(values: Iterable, long: Collection) -> list:
    """`values` as the parameters of `pytest.mark.parametrize`, those in `long` marked `long`: a
    slow test keeps its other parameters in the slow tier. A `long` value not among `values` (a
    renamed design) is refused, so no parameter silently leaves the long tier for CI."""
    values = list(values)
    unknown = [v for v in long if v not in values]
    if unknown:
        raise ValueError(f"long parameters {unknown} are not among the parameters {values}")
    return [pytest.param(v, marks=pytest.mark.long) if v in long else v for v in values]


def slow_params(values: Iterable, fast: Collection, ids: Callable[[object], str] | None = None) -> list:
    """`values` as the parameters of `pytest.mark.parametrize` or of a parametrized fixture, all but
    those in `fast` marked `slow`: the fast tier keeps the configurations that together cover the
    test's distinct code paths, CI's slow tier runs the others. With `ids`, a parameter's id is
    `ids(value)` and `fast` names ids, else values; a tuple is the arguments of a test taking several
    (`parametrize("a,b", ...)`), as for pytest. A value may already be a `pytest.param` (of
    `long_params`): its marks and id are kept. A `fast` name among none of the parameters (a renamed
    configuration) is refused, so is a long one: the long tier is part of the slow one."""
    fast = list(fast)  # values need not be hashable
    params = [v if isinstance(v, ParameterSet) else pytest.param(*v if isinstance(v, tuple) else (v,)) for v in values]
    plain = [p.values[0] if len(p.values) == 1 else p.values for p in params]
    names = [ids(v) for v in plain] if ids else plain
    unknown = [f for f in fast if f not in names]
    if unknown:
        raise ValueError(f"fast parameters {unknown} are not among the parameters {names}")
    long = [n for n, p in zip(names, params) if n in fast and any(m.name == "long" for m in p.marks)]
    if long:
        raise ValueError(f"fast parameters {long} are marked long: the long tier is part of the slow one")
    return [
        pytest.param(
            *p.values,
            marks=[*p.marks] if n in fast else [*p.marks, pytest.mark.slow],
            id=p.id if p.id is not None or ids is None else n,
        )
        for n, p in zip(names, params)
    ]


def long_not_slow(items: Sequence[pytest.Item]) -> list[str]:
    """The node ids of the tests in `items` marked `long` but not `slow`."""
    return [i.nodeid for i in items if i.get_closest_marker("long") and not i.get_closest_marker("slow")]
