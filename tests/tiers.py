"""The test tiers, marked where each test is written: `@pytest.mark.slow` puts a test in the slow
tier (`make test-all`, CI), `@pytest.mark.long` as well puts it in the long tier (`make test-long`,
kept out of CI; CONTRIBUTING.md, "Running the tests", says what belongs there). CI runs
`-m "slow and not long"`, which keeps the long tier out only if every long test is also slow:
`tests/conftest.py` refuses a collection holding a test marked long but not slow (`long_not_slow`)."""

from collections.abc import Collection, Iterable, Sequence

import pytest


def long_params(values: Iterable, long: Collection) -> list:
    """`values` as the parameters of `pytest.mark.parametrize`, those in `long` marked `long`: a
    slow test keeps its other parameters in the slow tier. A `long` value not among `values` (a
    renamed design) is refused, so no parameter silently leaves the long tier for CI."""
    values = list(values)
    unknown = [v for v in long if v not in values]
    if unknown:
        raise ValueError(f"long parameters {unknown} are not among the parameters {values}")
    return [pytest.param(v, marks=pytest.mark.long) if v in long else v for v in values]


def long_not_slow(items: Sequence[pytest.Item]) -> list[str]:
    """The node ids of the tests in `items` marked `long` but not `slow`."""
    return [i.nodeid for i in items if i.get_closest_marker("long") and not i.get_closest_marker("slow")]
