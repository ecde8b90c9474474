import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from icml24.core import Context  # noqa: E402


def test_seeding_is_reproducible():
    a, b = Context(seed=3), Context(seed=3)
    assert a.rng().random() == b.rng().random()
    Context(seed=5)
    t1 = torch.rand(3)
    Context(seed=5)
    assert torch.equal(t1, torch.rand(3))
    g1, g2 = Context(seed=1).torch_generator(2), Context(seed=1).torch_generator(2)
    assert torch.equal(torch.rand(2, generator=g1), torch.rand(2, generator=g2))
    assert Context(seed=1).child_seed(0) != Context(seed=1).child_seed(1)


def test_figure_and_artifact(tmp_path):
    ctx = Context(seed=0, out_dir=tmp_path / "run")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = ctx.figure("curve", fig)
    assert path.exists() and path.suffix == ".png"
    art = ctx.artifact("heads", {"layers": np.arange(3)})
    assert art.read_text().count("2") >= 1
    with pytest.raises(ValueError, match="letters, digits"):
        ctx.figure("../escape", plt.figure())


def test_progress_passes_items_through():
    assert list(Context(seed=0).progress(range(4), "x")) == [0, 1, 2, 3]


def test_limit_threads_restores():
    before = torch.get_num_threads()
    with Context(seed=0).limit_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with Context.limit_threads(0):
        assert torch.get_num_threads() == before


def test_seed_keys_give_independent_reproducible_streams():
    ctx = Context(seed=3)
    assert ctx.rng() is ctx.rng()
    assert ctx.rng("a", 1).random() == Context(seed=3).rng("a", 1).random()
    assert ctx.rng("a", 1).random() != ctx.rng("a", 2).random()
    assert ctx.child_seed("cora") == Context(seed=3).child_seed("cora") != ctx.child_seed("citeseer")
    assert ctx.child_seed(5) == Context(seed=3).child_seed(5) != Context(seed=4).child_seed(5)
    with pytest.raises(TypeError, match="ints or strings"):
        ctx.child_seed(1.5)


def test_cached_builds_once_shares_across_seeds_and_keeps_the_global_stream(tmp_path):
    import torch

    calls = []

    def build(builder):
        calls.append(builder.seed)
        return {"w": torch.randn(3, generator=builder.torch_generator())}

    first = Context(seed=1, cache_dir=tmp_path, code_version="v1")
    before = torch.rand(1)
    torch.manual_seed(1)
    a = first.cached("base", {"seed": 7, "width": 3}, build)
    after_build = torch.rand(1)
    second = Context(seed=2, cache_dir=tmp_path, code_version="v1")
    torch.manual_seed(1)
    b = second.cached("base", {"seed": 7, "width": 3}, build)
    after_load = torch.rand(1)
    assert calls == [7] and torch.equal(a["w"], b["w"]) and before.shape == (1,)
    assert torch.equal(after_build, after_load)  # building does not move the run's global generator
    Context(seed=0, cache_dir=tmp_path, code_version="v2").cached("base", {"seed": 7, "width": 3}, build)
    assert calls == [7, 7]  # a new code version rebuilds
    for path in tmp_path.glob("base-*.pt"):
        path.write_bytes(b"torn")
    Context(seed=0, cache_dir=tmp_path, code_version="v1").cached("base", {"seed": 7, "width": 3}, build)
    assert len(calls) == 3  # an unreadable file is rebuilt, not trusted


def test_cached_without_a_folder_just_builds():
    assert Context(seed=3).cached("x", {"seed": 1}, lambda b: b.seed) == 1


_SIDE_BY_SIDE = """
import sys, time
from icml24.core import Context
count = sys.argv[2]

def build(ctx):
    with open(count, "a") as f:
        f.write("built\\n")
    time.sleep(1.5)
    return {"weight": float(ctx.rng().random())}

print(Context(seed=int(sys.argv[3]), cache_dir=sys.argv[1]).cached("model", {"seed": 0}, build)["weight"])
"""


def test_runs_side_by_side_that_miss_the_cache_together_build_once(tmp_path):
    """Two processes asking for the same artifact at once: one builds, the other waits and loads the same."""
    import subprocess
    import sys

    count = tmp_path / "builds.txt"
    procs = [subprocess.Popen([sys.executable, "-c", _SIDE_BY_SIDE, str(tmp_path / "cache"), str(count), str(seed)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in (0, 1)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert count.read_text().count("built") == 1
    assert outs[0][0] == outs[1][0] and float(outs[0][0]) > 0
