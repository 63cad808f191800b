"""PyTorch/XLA SPMD training steps on 4 virtual CPU devices: the batch marked split over them
(`xs.mark_sharding`), the model whole; XLA's SPMD partitioner chooses where the collectives go.
Two steps each of an MLP with SGD and momentum and of one with Adam; then one step each of a
CNN with BatchNorm2d, an MLP with LayerNorm (AdamW), one with BatchNorm1d, and a sequence model
with two LayerNorms and a loss that needs no labels (PyTorch/XLA lowers both norms to
batch-norm-training, which XLA's partitioner computes whole from gathered operands); a
TransformerEncoderLayer's inference and training step (attention merges the split batch into
its heads, which XLA gathers and splits again); last, an MLP step whose labels are not marked
(whole: XLA slices them for the split batch). Run it under
`hlogym harvest` (datasets/probes/generate.py does; the pinned XLA then compiles each module
for its 4 partitions).
"""

import os

# Before torch_xla starts: a CPU client with 4 devices, SPMD on.
os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("CPU_NUM_DEVICES", "4")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.distributed.spmd as xs  # noqa: E402
import torch_xla.runtime as xr  # noqa: E402

xr.use_spmd()
devices = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(devices), (devices,), ("batch",))
device = xm.xla_device()
torch.manual_seed(0)


def train(model, optimizer, steps=2, split_labels=True):
    for _ in range(steps):
        x = torch.randn(32, 16).to(device)
        y = torch.randint(0, 10, (32,)).to(device)
        xs.mark_sharding(x, mesh, ("batch", None))
        if split_labels:
            xs.mark_sharding(y, mesh, ("batch",))
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        xm.mark_step()


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 10)
    ).to(device)


sgd_model = mlp()
train(sgd_model, torch.optim.SGD(sgd_model.parameters(), lr=0.1, momentum=0.9))
adam_model = mlp()
train(adam_model, torch.optim.Adam(adam_model.parameters(), lr=1e-3))


def norm_step(model, shape, labelled=True):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(*shape).to(device)
    xs.mark_sharding(x, mesh, ("batch",) + (None,) * (len(shape) - 1))
    optimizer.zero_grad()
    out = model(x)
    if labelled:
        y = torch.randint(0, 10, (shape[0],)).to(device)
        xs.mark_sharding(y, mesh, ("batch",))
        loss = torch.nn.functional.cross_entropy(out, y)
    else:
        loss = (out**2).mean()
    loss.backward()
    optimizer.step()
    xm.mark_step()


class BatchNormCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x):
        return self.head(torch.relu(self.norm(self.conv(x))).mean((2, 3)))


norm_step(BatchNormCNN().to(device), (8, 3, 8, 8))
norm_step(
    torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(), torch.nn.Linear(32, 10)
    ).to(device),
    (32, 16),
)
norm_step(
    torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(), torch.nn.Linear(32, 10)
    ).to(device),
    (32, 16),
)
norm_step(
    torch.nn.Sequential(
        torch.nn.Linear(16, 32),
        torch.nn.LayerNorm(32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 16),
        torch.nn.LayerNorm(16),
    ).to(device),
    (8, 6, 16),
    labelled=False,
)


encoder = torch.nn.TransformerEncoderLayer(32, 2, 64, dropout=0.0, batch_first=True).to(device)
encoder.eval()
with torch.no_grad():
    tokens = torch.randn(8, 6, 32).to(device)
    xs.mark_sharding(tokens, mesh, ("batch", None, None))
    encoder(tokens)
    xm.mark_step()
encoder.train()
norm_step(encoder, (8, 6, 32), labelled=False)

# Labels left unmarked: replicated, sliced by XLA for the split batch.
unmarked_model = mlp()
train(
    unmarked_model,
    torch.optim.SGD(unmarked_model.parameters(), lr=0.1),
    steps=1,
    split_labels=False,
)
