"""What rnnsearch.cpu decides about bf16: native or emulated, and, where native, whether it is
faster than float32 here (a probe timed on this CPU, so only its relations are asserted)."""
from __future__ import annotations

import pytest
import torch

from rnnsearch import cpu


def test_the_probe_measures_only_native_bf16_and_gives_the_thread_count_back():
    before = torch.get_num_threads()
    speedup = cpu.bf16_speedup.__wrapped__(threads=1, repeats=1)
    assert torch.get_num_threads() == before
    if cpu.bf16_native():
        assert speedup > 0
    else:  # emulated (the forced-down pass of `make test`): not timed, never chosen
        assert speedup == 0.0 and not cpu.bf16_pays()


@pytest.mark.parametrize("speedup, pays, warns", [(0.0, False, True), (0.64, False, True), (1.05, False, False),
                                                  (1.6, True, False)])
def test_bf16_is_chosen_and_warned_of_by_its_measured_speed(monkeypatch, speedup, pays, warns):
    monkeypatch.setattr(cpu, "bf16_native", lambda: speedup > 0)
    monkeypatch.setattr(cpu, "bf16_speedup", lambda: speedup)
    assert cpu.bf16_pays() is pays
    warning = cpu.emulated_warning("train.bf16", cpu.EMULATED_TRAINING)
    assert (warning is not None) is warns
    if warns and speedup > 0:
        assert f"ran at {speedup:.2f}x float32's speed" in warning and "float32 is likely faster" in warning
    if warns and speedup == 0:
        assert "no native bf16" in warning and cpu.EMULATED_TRAINING in warning
