"""Corpus families from the third frontend: PyTorch through PyTorch/XLA (torch_xla), not JAX or TF.

Each module is the graph PyTorch/XLA hands to XLA for one step of an ordinary PyTorch program on an
XLA device: the lazy tensors that `xm.mark_step()` would compile (the loss or output, and for a
training step every parameter, gradient and optimizer state it updates), printed by
`torch_xla._XLAC._get_xla_tensors_hlo` with XLA_HLO_DEBUG=1 (what XLA_SAVE_TENSORS_FMT=hlo writes).
Its HLO looks unlike JAX's and TF's: every parameter, input and optimizer scalar arrives as a
device-data parameter, aten op names in the metadata (aten__addcmul, aten__expand, xla__cast),
broadcasts of scalars for every Python number, a tuple of all live tensors as the result.
  pt_mlp          an MLP classifier (nn.Linear, nn.GELU, nn.LayerNorm); training steps with SGD
                  with momentum
  pt_transformer  an nn.TransformerEncoder classifier (batch_first, pre-norm); training steps with
                  AdamW
  pt_cnn          a small CNN (nn.Conv2d, nn.BatchNorm2d, nn.MaxPool2d, nn.Linear); training steps
                  with SGD, inference in eval mode
and, for the generated training set (generate.py --training), pt_lstm (nn.LSTM, Adam), pt_conv1d
(nn.Conv1d, nn.BatchNorm1d, RMSprop) and pt_autoencoder (an MLP autoencoder with a classifier on its
code, Adagrad).

Run as a script by generate.py, with the python of a venv holding
datasets/corpus/requirements-torch.txt (HLOGYM_TORCH_PYTHON; torch_xla carries its own XLA, so it
gets a process of its own):
    python torch_models.py FAMILY CONFIG_JSON NAME > module.hlo
prints the module with its name set to NAME and source paths dropped from metadata, so the text
does not depend on where the venv lives.
"""

from __future__ import annotations

import json
import os
import re
import sys

os.environ.setdefault("PJRT_DEVICE", "CPU")
# metadata with the aten op and its Python frame, as a user debugging PyTorch/XLA prints it
os.environ.setdefault("XLA_HLO_DEBUG", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DTYPES = {"f32": "float32", "bf16": "bfloat16"}


def mlp(torch, cfg):
    nn = torch.nn
    layers, width = [], cfg["features"]
    for _ in range(cfg["layers"]):
        layers += [nn.Linear(width, cfg["hidden"]), nn.LayerNorm(cfg["hidden"]), nn.GELU()]
        width = cfg["hidden"]
    model = nn.Sequential(*layers, nn.Linear(width, cfg["classes"]))
    inputs = [torch.randn(cfg["batch"], cfg["features"])]
    return model, inputs, lambda params: torch.optim.SGD(params, lr=0.01, momentum=0.9)


def transformer(torch, cfg):
    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(cfg["vocab"], cfg["d"])
            self.position = nn.Parameter(torch.randn(cfg["seq"], cfg["d"]) * 0.02)
            layer = nn.TransformerEncoderLayer(
                cfg["d"], cfg["heads"], 4 * cfg["d"], dropout=0.0, batch_first=True, norm_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, cfg["layers"], enable_nested_tensor=False)
            self.head = nn.Linear(cfg["d"], cfg["classes"])

        def forward(self, tokens):
            x = self.encoder(self.embed(tokens) + self.position)
            return self.head(x.mean(dim=1))

    inputs = [torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))]
    return Classifier(), inputs, lambda params: torch.optim.AdamW(params, lr=1e-3)


def cnn(torch, cfg):
    nn = torch.nn
    blocks, channels = [], 3
    for width in cfg["widths"]:
        blocks += [
            nn.Conv2d(channels, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(2),
        ]
        channels = width
    model = nn.Sequential(
        *blocks,
        nn.Flatten(),
        nn.Linear(channels * (cfg["res"] >> len(cfg["widths"])) ** 2, cfg["classes"]),
    )
    inputs = [torch.randn(cfg["batch"], 3, cfg["res"], cfg["res"])]
    return model, inputs, lambda params: torch.optim.SGD(params, lr=0.01)


def lstm(torch, cfg):
    """For the generated training set: an nn.LSTM language model (PyTorch/XLA unrolls it)."""
    nn = torch.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(cfg["vocab"], cfg["embed"])
            self.lstm = nn.LSTM(cfg["embed"], cfg["hidden"], cfg["layers"], batch_first=True)
            self.head = nn.Linear(cfg["hidden"], cfg["classes"])

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.head(out[:, -1])

    inputs = [torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))]
    return LanguageModel(), inputs, lambda params: torch.optim.Adam(params, lr=1e-3)


def conv1d(torch, cfg):
    """For the generated training set: a 1-D CNN over sequences (nn.Conv1d, nn.BatchNorm1d,
    nn.AdaptiveAvgPool1d), RMSprop."""
    nn = torch.nn
    blocks, channels = [], cfg["features"]
    for width in cfg["widths"]:
        blocks += [nn.Conv1d(channels, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU()]
        channels = width
    model = nn.Sequential(
        *blocks, nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(channels, cfg["classes"])
    )
    inputs = [torch.randn(cfg["batch"], cfg["features"], cfg["seq"])]
    return model, inputs, lambda params: torch.optim.RMSprop(params, lr=1e-3)


def autoencoder(torch, cfg):
    """For the generated training set: an MLP autoencoder whose classifier head reads the code
    (nn.Tanh, nn.Dropout in training), Adagrad."""
    nn = torch.nn

    class Autoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            f, h, z = cfg["features"], cfg["hidden"], cfg["code"]
            self.encode = nn.Sequential(
                nn.Linear(f, h), nn.Tanh(), nn.Dropout(0.1), nn.Linear(h, z)
            )
            self.decode = nn.Sequential(nn.Linear(z, h), nn.Tanh(), nn.Linear(h, f))
            self.head = nn.Linear(z, cfg["classes"])

        def forward(self, x):
            code = self.encode(x)
            # the reconstruction error joins the logits' graph through a scalar penalty
            penalty = (self.decode(code) - x).pow(2).mean()
            return self.head(code) + penalty

    inputs = [torch.randn(cfg["batch"], cfg["features"])]
    return Autoencoder(), inputs, lambda params: torch.optim.Adagrad(params, lr=1e-2)


BUILDERS = {
    "pt_mlp": mlp,
    "pt_transformer": transformer,
    "pt_cnn": cnn,
    "pt_lstm": lstm,
    "pt_conv1d": conv1d,
    "pt_autoencoder": autoencoder,
}


def step_tensors(torch, family, cfg):
    """The device tensors one step leaves pending: what mark_step() would compile."""
    import torch_xla

    torch.manual_seed(0)
    model, inputs, make_optimizer = BUILDERS[family](torch, cfg)
    device = torch_xla.device()
    dtype = getattr(torch, DTYPES[cfg["dtype"]])
    model = model.to(device=device, dtype=dtype)
    inputs = [
        x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype) for x in inputs
    ]
    # the parameters and inputs as device data: the step's graph reads them as parameters
    torch_xla.sync()
    if cfg["mode"] == "infer":
        model.eval()
        with torch.no_grad():
            return [model(*inputs)]
    model.train()
    optimizer = make_optimizer(model.parameters())
    labels = torch.randint(0, cfg["classes"], (cfg["batch"],)).to(device)
    loss = torch.nn.functional.cross_entropy(model(*inputs).float(), labels)
    loss.backward()
    optimizer.step()
    live = [loss] + list(model.parameters()) + [p.grad for p in model.parameters()]
    live += list(model.buffers())  # batch norm's running statistics
    for state in optimizer.state.values():
        live += [v for v in state.values() if torch.is_tensor(v) and v.device == device]
    return live


_SOURCE = re.compile(r'\s*source_file="[^"]*"\s*source_line=\d+')


def hlo_text(name, family, cfg):
    """The HLO PyTorch/XLA prints for the step, named `name`, without source paths."""
    import torch
    import torch_xla

    text = torch_xla._XLAC._get_xla_tensors_hlo(step_tensors(torch, family, cfg))
    old = re.match(r"HloModule (\S+?)[,\s]", text).group(1)
    # (the entry keeps PyTorch/XLA's own name, IrToHlo.N)
    text = re.sub(rf"^HloModule {re.escape(old)}\b", f"HloModule {name}", text, count=1)
    return _SOURCE.sub("", text)


if __name__ == "__main__":
    family, config, name = sys.argv[1:4]
    sys.stdout.write(hlo_text(name, family, json.loads(config)))
