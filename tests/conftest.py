import pytest
import torch

from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(2)


@pytest.fixture
def small_argmax():
    return ModelConfig(task=TaskConfig("argmax", n_classes=5), hidden=16)


@pytest.fixture
def small_dictionary():
    return ModelConfig(task=TaskConfig("dictionary", n_keys=256, n_values=8), hidden=16, key_dim=8, value_dim=8)
