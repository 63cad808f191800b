"""Distributed PyTorch/XLA training steps, as one replica of four sees them: data-parallel
(gradients all-reduced, over an explicit group and over every replica), ZeRO-style (gradients
reduce-scattered, each replica updates its shard, parameters all-gathered), a pipeline stage
(activations handed to the next stage with a collective permute) and an expert-parallel
mixture-of-experts layer (tokens exchanged with all-to-all), f32 and bf16.

    VENV/bin/python examples/harvest/torch_collectives.py OUT_DIR

writes OUT_DIR/<name>.hlo: the graph `xm.mark_step()` would hand to XLA, as PyTorch/XLA prints it
(`torch_xla._XLAC._get_xla_tensors_hlo`), with `replica_count=4` in its header, since the
collectives are written for four replicas while this process holds one CPU device. Nothing runs:
the graphs are only traced. XLA compiles them for four replicas
(datasets/probes/compile_with_pinned_xla.py reads the header). VENV holds torch and torch_xla
(datasets/corpus/requirements-torch.txt).
"""

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# PyTorch/XLA leaves collectives out of a one-device world unless told to keep them.
os.environ["XLA_ALWAYS_ALLREDUCE"] = "1"

import torch  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402

REPLICAS = 4
EVERY_REPLICA = [list(range(REPLICAS))]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def mlp(width):
    return torch.nn.Sequential(
        torch.nn.Linear(32, width),
        torch.nn.GELU(),
        torch.nn.LayerNorm(width),
        torch.nn.Linear(width, 10),
    )


def transformer(width):
    layer = torch.nn.TransformerEncoderLayer(
        width, nhead=2, dim_feedforward=2 * width, batch_first=True, norm_first=True, dropout=0.0
    )

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Linear(32, width)
            self.encoder = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
            self.head = torch.nn.Linear(width, 10)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)).mean(dim=1))

    return Classifier()


def inputs(model_kind, dtype, device):
    shape = (8, 32) if model_kind == "mlp" else (4, 8, 32)
    x = torch.randn(*shape).to(device=device, dtype=dtype)
    labels = torch.randint(0, 10, (shape[0],)).to(device)
    return x, labels


def model_and_loss(model_kind, width, dtype):
    device = torch_xla.device()
    torch.manual_seed(0)
    model = (mlp if model_kind == "mlp" else transformer)(width).to(device=device, dtype=dtype)
    x, labels = inputs(model_kind, dtype, device)
    torch_xla.sync()  # parameters and inputs as device data: the step reads them as parameters
    loss = torch.nn.functional.cross_entropy(model(x).float(), labels)
    loss.backward()
    return model, loss


def data_parallel(model_kind, width, dtype, groups):
    model, loss = model_and_loss(model_kind, width, dtype)
    if model_kind == "mlp":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    grads = [p.grad for p in model.parameters()]
    xm.all_reduce(xm.REDUCE_SUM, grads, scale=1.0 / REPLICAS, groups=groups, pin_layout=False)
    optimizer.step()
    live = [loss] + list(model.parameters())
    for state in optimizer.state.values():
        live += [v for v in state.values() if torch.is_tensor(v) and v.device == loss.device]
    return live


def zero(model_kind, width, dtype):
    """Each replica keeps a quarter of every flattened parameter's optimizer work."""
    model, loss = model_and_loss(model_kind, width, dtype)
    live = [loss]
    for p in model.parameters():
        pad = (-p.numel()) % REPLICAS
        grad = torch.nn.functional.pad(p.grad.reshape(-1), (0, pad))
        grad_shard = xm.reduce_scatter(
            xm.REDUCE_SUM,
            grad,
            scale=1.0 / REPLICAS,
            scatter_dim=0,
            shard_count=REPLICAS,
            groups=EVERY_REPLICA,
            pin_layout=False,
        )
        shards = torch.nn.functional.pad(p.detach().reshape(-1), (0, pad)).reshape(REPLICAS, -1)
        updated = shards[0] - 0.1 * grad_shard
        full = xm.all_gather(updated, dim=0, groups=EVERY_REPLICA, pin_layout=False)
        live.append(full[: p.numel()].reshape(p.shape))
    return live


def pipeline_stage(model_kind, width, dtype):
    """A middle stage: its activations go to the next replica, the previous one's come in, and
    the gradient of a loss on what came in flows back to this stage's parameters."""
    device = torch_xla.device()
    torch.manual_seed(0)
    stage = torch.nn.Sequential(
        torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width)
    ).to(device=device, dtype=dtype)
    x = torch.randn(8, width).to(device=device, dtype=dtype)
    torch_xla.sync()
    hidden = stage(x)
    ring = [[i, (i + 1) % REPLICAS] for i in range(REPLICAS)]
    received = xm.collective_permute(hidden, pairs=ring)
    loss = (received.float() * hidden.float()).mean()
    loss.backward()
    return [loss, received] + [p.grad for p in stage.parameters()]


def experts(model_kind, width, dtype):
    """Expert parallelism: each replica's tokens go to the replica holding their expert and
    come back after it (all-to-all both ways); the gradients are averaged over the replicas."""
    device = torch_xla.device()
    torch.manual_seed(0)
    router = torch.nn.Linear(width, REPLICAS).to(device=device, dtype=dtype)
    expert = torch.nn.Sequential(
        torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width)
    ).to(device=device, dtype=dtype)
    tokens = torch.randn(4 * REPLICAS, width).to(device=device, dtype=dtype)
    torch_xla.sync()
    gate = torch.softmax(router(tokens).float(), dim=-1).to(dtype)
    dispatched = xm.all_to_all(
        tokens, split_dimension=0, concat_dimension=0, split_count=REPLICAS, groups=EVERY_REPLICA
    )
    expert_out = expert(dispatched)
    returned = xm.all_to_all(
        expert_out,
        split_dimension=0,
        concat_dimension=0,
        split_count=REPLICAS,
        groups=EVERY_REPLICA,
    )
    # PyTorch/XLA's all-to-all has no gradient: the experts learn from their own outputs.
    loss = (returned * gate.max(dim=-1, keepdim=True).values).float().pow(2).mean()
    loss = loss + expert_out.float().pow(2).mean()
    loss.backward()
    grads = [p.grad for p in list(router.parameters()) + list(expert.parameters())]
    xm.all_reduce(
        xm.REDUCE_SUM, grads, scale=1.0 / REPLICAS, groups=EVERY_REPLICA, pin_layout=False
    )
    return [loss] + grads


STEPS = {
    # (kind, model, width): the step's live tensors
    "dp_groups": lambda m, w, d: data_parallel(m, w, d, EVERY_REPLICA),
    "dp_all": lambda m, w, d: data_parallel(m, w, d, None),
    "zero": zero,
    "pipeline": pipeline_stage,
    "experts": experts,
}
CONFIGS = [
    ("dp_groups", "mlp", 64),
    ("dp_groups", "transformer", 32),
    ("dp_all", "mlp", 64),
    ("dp_all", "transformer", 32),
    ("zero", "mlp", 64),
    ("zero", "transformer", 32),
    ("pipeline", "mlp", 64),
    ("experts", "mlp", 32),
]
_SOURCE = re.compile(r'\s*source_file="[^"]*"\s*source_line=\d+')


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for kind, model_kind, width in CONFIGS:
        for dtype_name, dtype in DTYPES.items():
            name = f"pt_{kind}_{model_kind}_w{width}_{dtype_name}"
            text = torch_xla._XLAC._get_xla_tensors_hlo(STEPS[kind](model_kind, width, dtype))
            text = re.sub(
                r"^HloModule \S+?,", f"HloModule {name}, replica_count={REPLICAS},", text, count=1
            )
            (out / f"{name}.hlo").write_text(_SOURCE.sub("", text))
            print(f"{out / name}.hlo")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
