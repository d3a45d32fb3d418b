"""The tier marks hold the Makefile's selections: a test marked `long` but not `slow` stops the
collection naming it (CI's `-m "slow and not long"` would run it otherwise), and a long or fast
parameter must name one of the test's parameters (`tests/tiers.py`)."""

import pytest

from tests.tiers import long_params, slow_params

pytest_plugins = ["pytester"]


def test_a_long_test_that_is_not_slow_stops_the_collection(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # no installed plugin is needed: quicker
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    pytester.makepyfile(
        test_marks="""
        import pytest

        @pytest.mark.slow
        @pytest.mark.long
        def test_slow_and_long():
            pass

        @pytest.mark.long
        def test_long_alone():
            pass

        @pytest.mark.slow
        @pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.long)])
        def test_slow_with_a_long_parameter(x):
            pass

        @pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.long)])
        def test_fast_with_a_long_parameter(x):
            pass
        """
    )
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    named = "\n".join(result.errlines)
    assert "test_marks.py::test_long_alone" in named and "test_marks.py::test_fast_with_a_long_parameter[2]" in named
    assert "test_slow_and_long" not in named and "test_slow_with_a_long_parameter" not in named
    assert "[1]" not in named


def test_long_parameters_are_marked_and_must_name_a_parameter():
    params = long_params(["a", "b", "c"], long={"b"})
    assert params[0] == "a" and params[2] == "c"
    assert params[1].values == ("b",) and [m.name for m in params[1].marks] == ["long"]
    with pytest.raises(ValueError, match=r"\['renamed'\]"):
        long_params(["a", "b"], long={"b", "renamed"})


def test_slow_parameters_are_all_but_the_fast_ones_and_must_name_a_parameter():
    params = slow_params(["a", "b", "c"], fast={"b"})
    assert [p.values for p in params] == [("a",), ("b",), ("c",)]
    assert [[m.name for m in p.marks] for p in params] == [["slow"], [], ["slow"]]
    with pytest.raises(ValueError, match=r"\['renamed'\]"):
        slow_params(["a", "b"], fast={"b", "renamed"})


def test_slow_parameters_are_named_by_their_ids_and_keep_long_marks():
    params = slow_params(long_params([1, 2, 3], long={3}), fast={"x1"}, ids=lambda v: f"x{v}")
    assert [p.id for p in params] == ["x1", "x2", "x3"]
    assert [sorted(m.name for m in p.marks) for p in params] == [[], ["slow"], ["long", "slow"]]
    with pytest.raises(ValueError, match=r"\['x3'\] are marked long"):
        slow_params(long_params([1, 2, 3], long={3}), fast={"x3"}, ids=lambda v: f"x{v}")
    pairs = slow_params([(1, 2), (3, 4)], fast={(3, 4)})  # several arguments: named by their tuple
    assert [p.values for p in pairs] == [(1, 2), (3, 4)] and [len(p.marks) for p in pairs] == [1, 0]
