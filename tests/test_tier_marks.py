"""The tier marks hold the Makefile's selections: a test marked `long` but not `slow` stops the
collection naming it (CI's `-m "slow and not long"` would run it otherwise), and a long parameter
must name one of the test's parameters (`tests/tiers.py`)."""

import pytest

from tests.tiers import long_params

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
