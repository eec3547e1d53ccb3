"""kernelkit's options: set/get/context, their errors, the deprecated constants, and that
``solver="auto"`` reads the cost model at fit time."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

import kernelkit
from kernelkit import KernelRidge, config_context, get_config, set_config
from kernelkit.kernels import Gaussian
from kernelkit.utils._config import Options
from kernelkit.utils._errors import InputError

DEFAULTS = dataclasses.asdict(Options())


def test_defaults_are_the_measured_constants():
    config = get_config()
    assert config["kernel_entry_flops"] == 100.0 and config["exact_flops"] == 3e11
    assert config["nystrom_tile_bytes"] == 2 << 20 and config["keep_fraction"] == 0.25
    assert isinstance(config["unmapped_rows_per_centre"], int)


def test_set_get_round_trip_and_get_returns_a_copy():
    try:
        set_config(kernel_entry_flops=150, unmapped_rows_per_centre=6)
        config = get_config()
        assert config["kernel_entry_flops"] == 150.0
        assert isinstance(config["kernel_entry_flops"], float)
        assert config["unmapped_rows_per_centre"] == 6
        config["kernel_entry_flops"] = -1.0  # a copy: changes nothing
        assert get_config()["kernel_entry_flops"] == 150.0
    finally:
        set_config(kernel_entry_flops=100.0, unmapped_rows_per_centre=4)
    assert get_config() == DEFAULTS


def test_context_restores_the_previous_values_even_on_an_exception():
    with config_context(exact_flops=0.0, keep_fraction=0.5):
        assert get_config()["exact_flops"] == 0.0 and get_config()["keep_fraction"] == 0.5
        with config_context(exact_flops=1.0):
            assert get_config()["exact_flops"] == 1.0
        assert get_config()["exact_flops"] == 0.0
    assert get_config() == DEFAULTS
    with pytest.raises(RuntimeError, match="inside"), config_context(eigh_flops=9.0):
        assert get_config()["eigh_flops"] == 9.0
        raise RuntimeError("inside")
    assert get_config()["eigh_flops"] == DEFAULTS["eigh_flops"]


def test_top_level_names():
    assert {"set_config", "get_config", "config_context"} <= set(kernelkit.__all__)
    assert kernelkit.set_config is set_config


def test_unknown_option_names_the_option_and_lists_the_valid_ones():
    with pytest.raises(InputError, match=r"kernel_flops: not a kernelkit option") as info:
        set_config(kernel_flops=1.0)
    assert "kernel_entry_flops" in str(info.value) and "exact_flops" in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(InputError, match="not a kernelkit option"), config_context(nope=1):
        pass


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"kernel_entry_flops": "100"}, r"kernel_entry_flops: expected a real number, got '100'"),
        ({"shared_blas_centres": 4000.5}, r"shared_blas_centres: expected an int, got 4000.5"),
        ({"shared_blas_centres": True}, r"shared_blas_centres: expected an int, got True"),
        ({"keep_fraction": 1.5}, r"keep_fraction: expected a finite value in \(0, 1\], got 1.5"),
        ({"kernel_entry_flops": 0.0}, r"kernel_entry_flops: expected a finite value > 0"),
        ({"exact_flops": float("inf")}, r"exact_flops: expected a finite value >= 0, got inf"),
        ({"cg_reference_lam": float("nan")}, r"cg_reference_lam: expected a finite value > 0"),
    ],
)
def test_bad_values_are_refused_and_change_nothing(values, message):
    with pytest.raises(InputError, match=message):
        set_config(eigh_flops=7.0, **values)
    assert get_config() == DEFAULTS


@pytest.mark.parametrize(
    ("module", "name", "option"),
    [
        ("kernelkit.models._falkon", "KEPT_ENTRY_FLOPS", "kept_entry_flops"),
        ("kernelkit.models._falkon", "UNMAPPED_ROWS_PER_CENTRE", "unmapped_rows_per_centre"),
        ("kernelkit.models._falkon_logistic", "HESSIAN_SAMPLE_BYTES", "hessian_sample_bytes"),
        ("kernelkit.models._logistic_path", "PATIENCE", "logistic_patience"),
        ("kernelkit.gram._streaming", "NYSTROM_TILE_BYTES", "nystrom_tile_bytes"),
        ("kernelkit.solvers._spectra", "DENSE_MAX_N", "spectrum_dense_max_n"),
        ("kernelkit.solvers._eigen", "FULL_MAX_N", "eigen_full_max_n"),
        ("kernelkit.gram._tiling", "DEFAULT_TILE_BYTES", "gram_tile_bytes"),
        ("kernelkit.models._gp_nystrom", "TILE_ENTRIES", "gp_tile_entries"),
        ("kernelkit.estimators._logistic", "NEWTON_STEPS", "logistic_newton_steps"),
    ],
)
def test_removed_constants_warn_and_return_the_option(module, name, option):
    mod = importlib.import_module(module)
    assert name not in getattr(mod, "__all__", ())
    with pytest.warns(FutureWarning, match=rf"{name} is deprecated.*get_config\(\)\['{option}'\]"):
        assert getattr(mod, name) == get_config()[option]
    with config_context(**{option: 2 * get_config()[option]}), pytest.warns(FutureWarning):
        assert getattr(mod, name) == get_config()[option]
    with pytest.raises(AttributeError, match="no attribute 'NOT_A_CONSTANT'"):
        mod.NOT_A_CONSTANT


def _auto_ridge(n: int, m: int) -> str:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    model = KernelRidge(Gaussian(1.0), lam=1e-3, n_centers=m, solver="auto", random_state=0)
    model.fit(X, y)
    return getattr(model, "nystrom_method_", model.solver_)


def test_exact_flops_changes_the_choice_of_solver_auto():
    # n = 400, m = 100: the exact solve (3.8e7 modelled flops) is under exact_flops (3e11),
    # so "auto" takes it; with exact_flops = 0 the cheaper one-pass Nyström (2.8e7) wins
    assert _auto_ridge(400, 100) == "exact"
    with config_context(exact_flops=0.0):
        assert _auto_ridge(400, 100) == "onepass"
    assert _auto_ridge(400, 100) == "exact"


def test_kernel_entry_flops_moves_the_exact_onepass_boundary():
    # n = 400, m = 200 on costs alone (exact_flops = 0): exact 3.8e7 against one-pass 7.2e7;
    # a kernel value priced 4x (400 flops) makes the exact solver's n^2 values cost 6.5e7 more
    with config_context(exact_flops=0.0):
        assert _auto_ridge(400, 200) == "exact"
        with config_context(kernel_entry_flops=400.0):
            assert _auto_ridge(400, 200) == "onepass"


def test_the_docs_page_lists_every_option():
    page = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    listed = set(re.findall(r"^\| `(\w+)` \|", page.read_text(encoding="utf-8"), re.M))
    assert listed == set(DEFAULTS)
