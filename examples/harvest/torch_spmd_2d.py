"""PyTorch/XLA SPMD training steps on 4 virtual CPU devices laid out as a 2 x 2 mesh ("data",
"model"): the batch marked split along "data", Megatron-style weights along "model" (the first
linear layer's output features, the second's input features), and the weights of a second model
split along both axes (FSDP beside tensor parallelism); SGD with momentum and Adam steps. XLA's SPMD
partitioner (GSPMD's shardings: the module names no mesh) splits them along both axes. Run it
under `hlogym harvest` (datasets/probes/generate.py does; the pinned XLA then compiles each module
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
mesh = xs.Mesh(np.arange(4), (2, 2), ("data", "model"))
device = xm.xla_device()
torch.manual_seed(0)


def megatron(both_axes=False):
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32)
    ).to(device)
    # torch's Linear weight is [out, in]: the first split by its outputs, the second by its inputs.
    xs.mark_sharding(model[0].weight, mesh, ("model", "data" if both_axes else None))
    xs.mark_sharding(model[0].bias, mesh, ("model",))
    xs.mark_sharding(model[2].weight, mesh, ("data" if both_axes else None, "model"))
    return model


def train(model, optimizer, steps=2):
    for _ in range(steps):
        x = torch.randn(16, 32).to(device)
        y = torch.randn(16, 32).to(device)
        xs.mark_sharding(x, mesh, ("data", None))
        xs.mark_sharding(y, mesh, ("data", None))
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        xm.mark_step()


sgd_model = megatron()
train(sgd_model, torch.optim.SGD(sgd_model.parameters(), lr=0.1, momentum=0.9))
adam_model = megatron()
train(adam_model, torch.optim.Adam(adam_model.parameters(), lr=1e-3))
both_model = megatron(both_axes=True)
train(both_model, torch.optim.SGD(both_model.parameters(), lr=0.1))
