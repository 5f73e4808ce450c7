"""The vectorised weight and combination sweeps against the plain measures, on hand-made inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ebm.errors import InputError
from ebm.evaluation.scores import score_run
from ebm.evaluation.sweep import (
    CombinationScores,
    ComponentScores,
    combination_run,
    grid_weights,
    normalise,
    plot_curve,
    plot_surface,
    sweep_combination,
    sweep_weights,
    weights_run,
)

QRELS = {
    "q1": {"a": 3, "b": 0, "c": 2, "d": 1, "e": 2, "z": 2},  # z is relevant but never a candidate
    "q2": {"k": 0, "m": 2, "n": 0},
    "q3": {"x": 0, "y": 0},  # nothing relevant
}


def hand_made() -> list[ComponentScores]:
    # Small integers and halves, with deliberate ties between candidates (b/d on every component).
    return [
        ComponentScores(
            "q1",
            ["a", "b", "c", "d", "e"],
            pico=np.array([2.0, 1.0, 0.0, 1.0, -1.0]),
            soe=np.array([0.0, 0.5, 1.5, 0.5, 0.5]),
            task=np.array([-1.0, 1.0, 0.0, 1.0, 2.0]),
        ),
        ComponentScores(
            "q2",
            ["k", "m", "n", "p"],  # p is not judged: not relevant
            pico=np.array([1.0, 0.0, 1.0, 0.0]),
            soe=np.array([0.0, 1.0, 0.0, 0.0]),
            task=np.array([0.0, 0.0, 1.0, 3.0]),
        ),
        ComponentScores("q3", ["x", "y"], pico=np.zeros(2), soe=np.zeros(2), task=np.ones(2)),
    ]


def plain_means(items, l1, l2, l3, threshold=2) -> dict[str, float]:
    qrels = {item.qid: QRELS[item.qid] for item in items}
    scores = score_run(qrels, weights_run(items, l1, l2, l3), threshold)
    return {name: scores.mean(name) for name in scores.values}


@pytest.mark.parametrize("threshold", [2, 3])
def test_vectorised_surface_equals_plain_measures_everywhere(threshold: int) -> None:
    items = hand_made()
    surface = sweep_weights(items, QRELS, threshold, step=0.1)
    n = 10
    i, j, l1, l2, l3 = grid_weights(n)
    assert len(l1) == 66  # (n + 1)(n + 2) / 2 settings
    for k in range(len(l1)):
        expected = plain_means(items, l1[k], l2[k], l3[k], threshold)
        for name, value in expected.items():
            assert surface.values[name][i[k], j[k]] == pytest.approx(value, abs=1e-12), (name, l1[k], l2[k])
    # Outside the triangle l1 + l2 <= 1 there is no setting.
    assert np.isnan(surface.values["MAP"][10, 1]) and np.isnan(surface.values["MAP"][6, 5])
    assert not np.isnan(surface.values["MAP"][5, 5])


def test_fine_grid_spot_checks_and_best_setting() -> None:
    items = hand_made()
    surface = sweep_weights(items, QRELS, 2, step=0.01)
    assert surface.values["MAP"].shape == (101, 101)
    for l1, l2 in [(0.0, 0.0), (0.38, 0.34), (0.07, 0.93), (1.0, 0.0), (0.33, 0.33)]:
        l3 = (100 - round(l1 * 100) - round(l2 * 100)) / 100
        assert surface.at(l1, l2) == pytest.approx(plain_means(items, l1, l2, l3), abs=1e-12)
    # The best setting is a maximum of the surface and reproduces its value as a plain run.
    assert surface.best_value == pytest.approx(np.nanmax(surface.values["MAP"]))
    assert plain_means(items, *surface.best_weights)["MAP"] == pytest.approx(surface.best_value)
    assert surface.to_dict()["best"]["l3"] == surface.best_l3


def test_best_setting_of_a_case_solved_by_hand() -> None:
    # 'a' is the only relevant candidate; PICO favours it, SoE favours the others equally, the task
    # component is flat. 'a' ranks first exactly when l1 > l2; on l1 == l2 all three tie and the
    # candidates' order (as ebm ask breaks ties) puts 'a' last. MAP is 1 when l1 > l2, else 1/3.
    item = ComponentScores(
        "q", ["b", "c", "a"], pico=np.array([0, 0, 1.0]), soe=np.array([1.0, 1.0, 0]), task=np.zeros(3)
    )
    surface = sweep_weights([item], {"q": {"a": 2}}, 2, step=0.01)
    assert (surface.best_l1, surface.best_l2, surface.best_value) == (0.01, 0.0, 1.0)
    # Settings with i > j and i + j <= 100: sum over j = 0..49 of (100 - 2j) = 2550.
    assert surface.ties == 2550
    assert surface.at(0.5, 0.5)["MAP"] == pytest.approx(1 / 3)
    assert surface.at(0.2, 0.1)["MRR"] == 1.0
    assert surface.at(0.0, 0.0)["MAP"] == pytest.approx(1 / 3)  # only the flat task score: a tie


def test_measure_to_optimise() -> None:
    surface = sweep_weights(hand_made(), QRELS, 2, step=0.05, measure="P@10")
    assert surface.measure == "P@10"
    assert surface.best_value == pytest.approx(np.nanmax(surface.values["P@10"]))
    surface = sweep_weights(hand_made(), QRELS, 2, step=0.05, measure="P@3")
    assert "P@3" in surface.values and surface.best_value == pytest.approx(np.nanmax(surface.values["P@3"]))
    with pytest.raises(InputError, match="unknown measure"):
        sweep_weights(hand_made(), QRELS, 2, measure="nDCG")


def test_input_errors() -> None:
    with pytest.raises(InputError, match="shape"):
        ComponentScores("q", ["a", "b"], np.zeros(2), np.zeros(3), np.zeros(2))
    with pytest.raises(InputError, match="NaN"):
        ComponentScores("q", ["a"], np.array([np.nan]), np.zeros(1), np.zeros(1))
    with pytest.raises(InputError, match="twice"):
        ComponentScores("q", ["a", "a"], np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(InputError, match="does not divide 1"):
        sweep_weights(hand_made(), QRELS, 2, step=0.03)
    with pytest.raises(InputError, match="no questions"):
        sweep_weights([], QRELS, 2)


def test_normalise() -> None:
    assert normalise(np.array([2.0, 4.0, 3.0])) == pytest.approx([0.0, 1.0, 0.5])
    assert normalise(np.array([5.0, 5.0])) == pytest.approx([0.0, 0.0])
    z = normalise(np.array([1.0, 2.0, 3.0]), "zscore")
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    with pytest.raises(InputError, match="unknown normalisation"):
        normalise(np.array([1.0]), "rank")  # type: ignore[arg-type]


def combination_items() -> list[CombinationScores]:
    return [
        # EBM puts the relevant 'a' last, the term score first: small alphas win on q1.
        CombinationScores(
            "q1", ["c", "b", "a"], ebm=np.array([10.0, 5.0, 0.0]), term=np.array([0.0, 1.0, 9.0])
        ),
        # On q2 the EBM score is right and the term score is flat.
        CombinationScores(
            "q2", ["k", "m", "n"], ebm=np.array([1.0, 3.0, 2.0]), term=np.array([4.0, 4.0, 4.0])
        ),
    ]


@pytest.mark.parametrize("normalisation", ["minmax", "zscore", "none"])
def test_combination_sweep_equals_plain_runs(normalisation: str) -> None:
    items = combination_items()
    qrels = {"q1": {"a": 3}, "q2": {"m": 2}}
    curve = sweep_combination(items, qrels, 2, step=0.05, normalisation=normalisation)
    assert len(curve.alphas) == 21
    for k, alpha in enumerate(curve.alphas):
        beta = (20 - k) / 20
        scores = score_run(qrels, combination_run(items, alpha, normalisation, beta=beta), 2)
        for name in ("P@10", "MAP", "MRR", "TDRR"):
            assert curve.values[name][k] == pytest.approx(scores.mean(name), abs=1e-12), (name, alpha)


def test_combination_best_alpha_by_hand() -> None:
    # minmax on q1: ebm (0, .5, 1), term (1, 1/9, 0). Scores a = 1 - alpha, b = alpha / 2 + (1 - alpha) / 9,
    # c = alpha: 'a' beats c iff alpha < 1/2 and b iff alpha < 16/25; at alpha = 1/2 a and c tie and c
    # (the earlier candidate, as ebm ask breaks ties) goes first. On q2 'm' is first for any
    # alpha > 0 (the term score is flat). So MAP is 1 exactly for 0 < alpha < 0.5.
    curve = sweep_combination(combination_items(), {"q1": {"a": 3}, "q2": {"m": 2}}, 2, step=0.01)
    assert curve.best_alpha == 0.01 and curve.best_value == 1.0
    assert curve.ties == 49  # alpha = 0.01 .. 0.49
    assert curve.at(0.49)["MAP"] == 1.0 and curve.at(0.5)["MAP"] < 1.0 and curve.at(0.0)["MAP"] < 1.0
    assert curve.to_dict()["best_measures"]["MRR"] == 1.0


def test_plots_are_png(tmp_path: Path) -> None:
    import matplotlib.image

    surface = sweep_weights(hand_made(), QRELS, 2, step=0.05)
    path = plot_surface(surface, tmp_path / "surface.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.image.imread(path).shape[:2] == (660, 840)
    path = plot_surface(surface, tmp_path / "mrr.png", measure="mrr")
    assert path.stat().st_size > 10_000
    curve = sweep_combination(combination_items(), {"q1": {"a": 3}, "q2": {"m": 2}}, 2, step=0.1)
    path = plot_curve(curve, tmp_path / "alpha.png", measures=["MAP", "P@10"])
    assert matplotlib.image.imread(path).shape[:2] == (540, 840)
