import torch

from icml24.merging.text_setting import TextMergingSetting


def test_tiny_setting_gives_flat_weights_heads_and_scores():
    setting = TextMergingSetting(["sentiment", "currency"], size="tiny", num_train=32, num_val=8, num_test=8,
                                 max_length=12, random_state=0)
    assert setting.theta0.shape == (setting.layout.num_params,)
    assert [h.shape[0] for h in setting.heads] == [2, 4]
    tuned = setting.finetune(0, 5, 1e-3, torch.Generator().manual_seed(0), batch_size=4)
    assert tuned.shape == setting.theta0.shape and not torch.equal(tuned, setting.theta0)
    assert torch.equal(setting.finetune(0, 5, 1e-3, random_state=0, batch_size=4), tuned)  # int seed: same stream
    assert torch.equal(setting.finetune(0, 0, 1e-3, torch.Generator()), setting.theta0)
    for split in ("val", "test"):
        assert 0.0 <= setting.accuracy(tuned, 1, split) <= 1.0
