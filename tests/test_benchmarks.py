"""benchmarks/_timing.py: the median every ``make bench`` ratio uses, and the non-zero exit on disagreement."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _timing  # noqa: E402


def test_median_of_warms_up_then_takes_the_median():
    ticks = iter([0, 1, 1, 4, 4, 6, 6, 16, 16, 19, 100])  # durations 1, 3, 2, 10, 3 after one warm-up call
    calls = []
    out, seconds = _timing.median_of(lambda: calls.append(1) or len(calls), repeats=5, warmup=1,
                                     clock=lambda: next(ticks))
    assert len(calls) == 6 and out == 6 and seconds == 3
    with pytest.raises(ValueError):
        _timing.median_of(lambda: None, repeats=0)


def test_finish_exits_1_after_a_disagreement(monkeypatch, capsys):
    monkeypatch.setattr(_timing, "_DISAGREED", [])
    assert _timing.compare("same", 1.0, 2.0, True) == 2.0
    with pytest.raises(SystemExit) as ok:
        _timing.finish()
    assert ok.value.code == 0
    _timing.compare("differs", 1.0, 2.0, False)
    with pytest.raises(SystemExit) as failed:
        _timing.finish()
    assert failed.value.code == 1 and "differs" in capsys.readouterr().err


def test_hellinger_sdr_without_sliced_prints_the_recorded_ratio_and_checks_our_direction(monkeypatch, capsys,
                                                                                        tmp_path):
    import json

    import bench_hellinger_sdr as bench

    monkeypatch.setattr(_timing, "_DISAGREED", [])
    fixture = json.loads(bench.RECORDING.read_text())
    fixture["cases"] = [case for case in fixture["cases"] if case["n"] == 400]  # SIR and SAVE, fast
    assert {case["method"] for case in fixture["cases"]} == {"SIR", "SAVE"}
    recording = tmp_path / "recording.json"
    recording.write_text(json.dumps(fixture))
    bench.recorded_peer_lines("no local copy", 5, recording)
    out = capsys.readouterr().out
    assert out.count(f"x recorded {fixture['recorded']['date']}") == 2 and "outputs agree" in out
    assert _timing._DISAGREED == []
    fixture["cases"][1]["sliced_directions"] = [0.0] * 9 + [1.0]  # a direction SAVE does not find
    recording.write_text(json.dumps(fixture))
    bench.recorded_peer_lines("no local copy", 5, recording)
    assert "DISAGREE" in capsys.readouterr().out and len(_timing._DISAGREED) == 1


def test_e4_without_the_official_copy_prints_the_recorded_ratio(monkeypatch, capsys, tmp_path):
    import bench_e4 as bench

    monkeypatch.setenv("ICML24_PEERS", str(tmp_path))  # no official copy there
    monkeypatch.setattr(sys, "argv", ["bench_e4.py", "--horizon", "2000"])
    assert bench.main() == 0
    assert "recorded for K=9 d=5 T=20000" in capsys.readouterr().out.replace("recording is for", "recorded for")
    monkeypatch.setattr(sys, "argv", ["bench_e4.py"])
    assert bench.main() == 0
    out = capsys.readouterr().out
    date = bench.json.loads(bench.RECORDED.read_text())["recorded"]["date"]
    assert out.count(f"recorded {date}") == 2 and out.count("ratio ") == 2
