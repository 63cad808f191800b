#!/usr/bin/env python3
"""Generates the hlogym benchmark corpus under datasets/corpus/ from real JAX and TensorFlow model code.

    .venv/bin/python datasets/corpus/generate.py                  # everything (about 20 min, 2 jobs)
    .venv/bin/python datasets/corpus/generate.py --only NAME...   # selected modules, in place
    .venv/bin/python datasets/corpus/generate.py --only NAME... --out DIR --no-xla

The library families need their libraries, which the project's venv does not carry: make a venv
with `requirements.txt` and `requirements-libraries.txt` and run generate.py with its python
(`--only` with their names, then `--refresh` to rewrite the derived manifest fields and this page).
The TensorFlow families (tf_models.py) likewise, from a venv with `requirements.txt` and
`requirements-tensorflow.txt`; TensorFlowLowering says how their X is made. The PyTorch families
(torch_models.py) make a dataset of their own, datasets/pytorch (`--pytorch`), with torch_models.py
run by HLOGYM_TORCH_PYTHON, a venv with `requirements-torch.txt` (TorchLowering). The generated
training set (`--training`, build/datasets/training, not committed) mixes every frontend:
scripts/training_data.sh makes the three venvs and runs it.

For every configuration in CONFIGS (models in models.py) it writes
  <family>/<name>.hlo.zst              pre-optimization HLO: jax.jit(f).lower(*args).as_text("hlo")
  xla_reference/<name>.json.zst        real XLA's CPU pipeline on that module, pass by pass, up to
                                       (not including) layout-assignment: pass, pipeline, changed,
                                       op count and per-opcode histogram after it
and, for the whole corpus,
  xla_pass_pairs/<pass>/<name>.{before,after}.hlo.zst + xla_pass_pairs/index.json
                                       up to 3 (before, after) modules per XLA pass that changed a
                                       module, smallest modules first (metadata stripped)
  manifest.json, default_suite.txt, README.md

XLA's reference comes from compiling each module with jaxlib's CPU backend in a worker process
started with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.* and
TF_CPP_VMODULE=hlo_pass_pipeline=3: the log lists every pass run (with the instruction count before
it and whether it changed the module), the dumps give the module text after every pass that changed
it. Everything is deterministic: abstract arguments (jax.ShapeDtypeStruct), sorted JSON, zstd at a
fixed level, no time stamps or paths.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "python"))
from hlogym import pass_log  # noqa: E402  (the checkout's package; no extension needed)

ZSTD_LEVEL = 19
TEST_FRACTION = 0.25
PAIRS_PER_PASS = 3
# LLVM's optimization level only affects code generation after the HLO passes (checked: the pass
# trajectories up to layout-assignment are identical with and without it) and halves compile time.
EXTRA_XLA_FLAGS = os.environ.get("HLOGYM_CORPUS_XLA_FLAGS", "--xla_backend_optimization_level=0")

# ---------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------
# Per family: the grid, how many configurations to draw from it (seeded, deterministic), the keys
# that define the architecture (a split holds out whole architectures: every batch size, dtype,
# remat setting, optimizer and train/infer variant of a held-out architecture is in test), a
# validity predicate and fixed settings.
FAMILY_SPECS = {
    "gpt2": dict(
        n=112,
        grid=dict(
            layers=[1, 2, 3, 4],
            d=[32, 64, 128],
            heads=[2, 4, 8],
            seq=[16, 32, 64],
            batch=[1, 2, 4],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            mode=["train", "infer"],
            opt=["adamw", "adamw", "adamw", "sgd"],
        ),
        arch=["layers", "d", "heads", "seq"],
        fixed=dict(vocab=256),
        valid=lambda c: c["d"] // c["heads"] >= 8,
    ),
    "bert": dict(
        n=26,
        grid=dict(
            layers=[1, 2, 3, 4],
            d=[32, 64, 128],
            heads=[2, 4],
            seq=[16, 32, 64],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "seq"],
        fixed=dict(vocab=256),
        valid=lambda c: True,
    ),
    "resnet": dict(
        n=28,
        grid=dict(
            depth=[18, 18, 50, 26],
            width=[4, 8, 16],
            res=[16, 32],
            stem=["cifar", "imagenet"],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
            opt=["sgd", "adamw"],
        ),
        arch=["depth", "width", "res", "stem"],
        fixed=dict(classes=10),
        # ResNet-50 training steps are large (~650 KB of text): only at the smallest width.
        valid=lambda c: (
            not (c["depth"] == 50 and c["mode"] == "train" and c["width"] > 4)
            and not (c["width"] == 16 and c["res"] == 32 and c["depth"] != 18)
        ),
    ),
    "vit": dict(
        n=24,
        grid=dict(
            layers=[1, 2, 3, 4],
            d=[32, 64],
            heads=[2, 4],
            patch=[4, 8],
            res=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "patch", "res"],
        fixed=dict(classes=10),
        valid=lambda c: c["res"] // c["patch"] >= 2,
    ),
    "t5": dict(
        n=22,
        grid=dict(
            enc_layers=[1, 2],
            dec_layers=[1, 2],
            d=[32, 64],
            heads=[2, 4],
            ff=[64, 128],
            gated=[0, 1],
            src_len=[16, 32],
            tgt_len=[8, 16],
            batch=[2],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            mode=["train", "infer"],
        ),
        arch=["enc_layers", "dec_layers", "d", "heads", "ff", "gated", "src_len", "tgt_len"],
        fixed=dict(vocab=128),
        valid=lambda c: True,
    ),
    "mixer": dict(
        n=20,
        grid=dict(
            layers=[1, 2, 4],
            d=[32, 64],
            patch=[4, 8],
            res=[16, 32],
            tok_mlp=[16, 32],
            ch_mlp=[64, 128],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "patch", "res", "tok_mlp", "ch_mlp"],
        fixed=dict(classes=10),
        valid=lambda c: c["res"] // c["patch"] >= 2,
    ),
    "rnn": dict(
        n=24,
        grid=dict(
            cell=["lstm", "gru"],
            layers=[1, 2],
            hidden=[32, 64],
            embed=[16, 32],
            seq=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            unroll=[1, 2],
            mode=["train", "infer"],
        ),
        arch=["cell", "layers", "hidden", "embed", "seq"],
        fixed=dict(vocab=64),
        valid=lambda c: True,
    ),
    "unet": dict(
        n=16,
        grid=dict(
            ch=[8, 16],
            mults=[[1, 2], [1, 2, 2]],
            res=[8, 16],
            attn=[0, 1],
            batch=[1, 2],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["ch", "mults", "res", "attn"],
        fixed=dict(groups=4),
        valid=lambda c: True,
    ),
    "gnn": dict(
        n=24,
        grid=dict(
            layers=[1, 2, 3],
            hidden=[16, 32, 64],
            nodes=[16, 32, 64],
            edge_ratio=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "hidden", "nodes", "edge_ratio"],
        fixed=dict(graphs=4, node_feat=8, edge_feat=4, targets=2),
        valid=lambda c: True,
    ),
    "moe": dict(
        n=26,
        grid=dict(
            layers=[1, 2],
            d=[32, 64],
            heads=[2, 4],
            experts=[4, 8],
            top_k=[1, 2],
            ffn=[64, 128],
            capacity=[1.0, 1.25, 2.0],
            seq=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            remat=[0, 1],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "experts", "top_k", "ffn", "capacity", "seq"],
        fixed=dict(vocab=128),
        valid=lambda c: True,
    ),
    # Families written with model libraries (library_models.py; their pins are in
    # requirements-libraries.txt). Keras applications are inference graphs only: their training
    # steps have 10k-27k instructions at the smallest sizes.
    "keras_mobilenetv3": dict(
        n=6,
        library="keras",
        grid=dict(
            res=[32, 48], alpha=[0.75, 1.0], batch=[1, 2], dtype=["f32", "bf16"], mode=["infer"]
        ),
        arch=["res", "alpha"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    "keras_efficientnet": dict(
        n=4,
        library="keras",
        grid=dict(res=[32, 48], batch=[1, 2], dtype=["f32", "bf16"], mode=["infer"]),
        arch=["res"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    "keras_convnext": dict(
        n=4,
        library="keras",
        grid=dict(res=[32, 64], batch=[1, 2], dtype=["f32", "bf16"], mode=["infer"]),
        arch=["res"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    "keras_densenet": dict(
        n=4,
        library="keras",
        grid=dict(res=[32, 48], batch=[1, 2], dtype=["f32", "bf16"], mode=["infer"]),
        arch=["res"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    "flax_llama": dict(
        n=10,
        library="flax",
        grid=dict(
            layers=[1, 2],
            d=[32, 64],
            heads=[4],
            kv_heads=[1, 2],
            seq=[16, 32],
            batch=[2],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "kv_heads", "seq"],
        fixed=dict(vocab=128),
        valid=lambda c: True,
    ),
    "flax_vae": dict(
        n=8,
        library="flax",
        grid=dict(
            ch=[8, 16],
            latent=[8, 16],
            res=[16],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["ch", "latent", "res"],
        fixed=dict(),
        valid=lambda c: True,
    ),
    "eqx_mamba": dict(
        n=8,
        library="equinox",
        grid=dict(
            layers=[1, 2],
            d=[16, 32],
            state=[4, 8],
            seq=[16],
            batch=[2],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "state", "seq"],
        fixed=dict(vocab=64),
        valid=lambda c: True,
    ),
    "eqx_wavenet": dict(
        n=8,
        library="equinox",
        grid=dict(
            layers=[4, 6],
            cycle=[2, 3],
            ch=[8, 16],
            seq=[32, 64],
            batch=[2],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "cycle", "ch", "seq"],
        fixed=dict(classes=32),
        valid=lambda c: True,
    ),
    # The second frontend: TensorFlow graphs (tf_models.py, lowered by TF's own tf2xla in a
    # subprocess; pins in requirements-tensorflow.txt). f16 is Keras's mixed_float16 policy.
    "tf_mobilenetv2": dict(
        n=6,
        library="tensorflow",
        frontend="tensorflow",
        grid=dict(
            res=[32, 48],
            alpha=[0.35, 0.5, 1.0],
            batch=[1, 2],
            dtype=["f32", "bf16", "f16"],
            mode=["infer"],
        ),
        arch=["res", "alpha"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    "tf_bert": dict(
        n=8,
        library="tensorflow",
        frontend="tensorflow",
        grid=dict(
            layers=[1, 2],
            d=[32, 64],
            heads=[2, 4],
            seq=[16, 32],
            batch=[2],
            dtype=["f32", "bf16", "f16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "seq"],
        fixed=dict(vocab=128, classes=2),
        valid=lambda c: True,
    ),
    "tf_rnn": dict(
        n=8,
        library="tensorflow",
        frontend="tensorflow",
        grid=dict(
            cell=["lstm", "gru"],
            layers=[1, 2],
            hidden=[16, 32],
            seq=[8, 16],
            batch=[2],
            dtype=["f32", "f16"],
            mode=["train", "infer"],
        ),
        arch=["cell", "layers", "hidden", "seq"],
        fixed=dict(embed=16, vocab=64, classes=2),
        valid=lambda c: True,
    ),
    "tf_dlrm": dict(
        n=6,
        library="tensorflow",
        frontend="tensorflow",
        grid=dict(
            tables=[4, 8],
            emb=[8, 16],
            mlp=[[32, 16], [64, 32]],
            batch=[8, 32],
            dtype=["f32", "bf16", "f16"],
            mode=["train", "infer"],
        ),
        arch=["tables", "emb", "mlp"],
        fixed=dict(rows=100),
        valid=lambda c: True,
    ),
    # Large training steps (5,000-10,000 instructions), in a dataset of their own
    # (datasets/large_steps, `--large-steps`), none of it trained on: what users spend their compute
    # on, where a search's cost grows with the graph. Written with Flax (library_models.py); the
    # `valid` rules keep the configurations inside that size range.
    "flax_resnet": dict(
        n=12,
        library="flax",
        dataset="large_steps",
        grid=dict(
            depth=[34, 50],
            width=[8, 16],
            res=[16],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            opt=["sgd", "adamw"],
            mode=["train"],
        ),
        arch=["depth", "width", "res"],
        fixed=dict(classes=10),
        valid=lambda c: c["depth"] == 34 or c["opt"] == "sgd",  # ResNet-50 with AdamW: 11k
    ),
    "nnx_vit": dict(
        n=12,
        library="flax",
        dataset="large_steps",
        grid=dict(
            layers=[8, 10, 12],
            d=[64, 96],
            heads=[4],
            patch=[4],
            res=[16],
            batch=[2],
            dtype=["f32", "bf16"],
            opt=["sgd", "adamw"],
            mode=["train"],
        ),
        arch=["layers", "d", "heads", "patch", "res"],
        fixed=dict(classes=10),
        valid=lambda c: c["opt"] == "adamw" or c["layers"] == 12,  # fewer SGD layers: under 5k
    ),
    # The third frontend, in a dataset of its own (datasets/pytorch, `--pytorch`): PyTorch programs
    # on an XLA device (torch_models.py, in a process of its own; pins in requirements-torch.txt).
    "pt_mlp": dict(
        n=4,
        library="torch",
        frontend="pytorch",
        dataset="pytorch",
        grid=dict(
            layers=[2, 3],
            hidden=[64, 128],
            batch=[8, 16],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "hidden"],
        fixed=dict(features=32, classes=10),
        valid=lambda c: True,
    ),
    "pt_transformer": dict(
        n=6,
        library="torch",
        frontend="pytorch",
        dataset="pytorch",
        grid=dict(
            layers=[1, 2],
            d=[32, 64],
            heads=[2, 4],
            seq=[16, 32],
            batch=[2],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "d", "heads", "seq"],
        fixed=dict(vocab=128, classes=4),
        valid=lambda c: True,
    ),
    "pt_cnn": dict(
        n=6,
        library="torch",
        frontend="pytorch",
        dataset="pytorch",
        grid=dict(
            widths=[[8, 16], [16, 32], [8, 16, 32]],
            res=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["widths", "res"],
        fixed=dict(classes=10),
        valid=lambda c: True,
    ),
    # The generated training set (datasets/corpus/training_models.py and the frontends' scripts;
    # `--training`, written under build/, not committed): families that widen what a learned pass
    # orderer trains on, none of them a held-out family's architecture or library (no Keras).
    **{
        family: dict(dataset="training", module="training_models", **spec)
        for family, spec in {
            "mlp": dict(
                n=24,
                grid=dict(
                    layers=[2, 4, 8],
                    width=[64, 128],
                    features=[16, 64],
                    batch=[8, 32],
                    dtype=["f32", "bf16"],
                    remat=[0, 1],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["layers", "width", "features"],
                fixed=dict(classes=10),
            ),
            "vgg": dict(
                n=24,
                grid=dict(
                    widths=[[8, 16], [16, 32], [8, 16, 32]],
                    res=[16, 32],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["widths", "res"],
                fixed=dict(classes=10),
            ),
            "conv_ae": dict(
                n=20,
                grid=dict(
                    widths=[[8, 16], [16, 32], [8, 16, 32]],
                    res=[16, 32],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["widths", "res"],
                fixed={},
            ),
            "neural_ode": dict(
                n=24,
                grid=dict(
                    width=[16, 32, 64],
                    steps=[4, 8, 16],
                    features=[8, 32],
                    batch=[4, 16],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["width", "steps", "features"],
                fixed=dict(classes=4),
            ),
            "realnvp": dict(
                n=24,
                grid=dict(
                    couplings=[2, 4, 6],
                    width=[32, 64],
                    features=[8, 16],
                    batch=[16, 64],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["couplings", "width", "features"],
                fixed={},
            ),
            "perceiver": dict(
                n=24,
                grid=dict(
                    layers=[1, 2, 3],
                    d=[32, 64],
                    heads=[2, 4],
                    latents=[8, 16],
                    inputs=[32, 64],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                ),
                arch=["layers", "d", "heads", "latents", "inputs"],
                fixed=dict(features=16, classes=10),
            ),
            "deepsets": dict(
                n=24,
                grid=dict(
                    d=[32, 64],
                    heads=[2, 4],
                    set=[8, 32],
                    features=[4, 16],
                    batch=[4, 16],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["d", "heads", "set", "features"],
                fixed=dict(classes=5),
            ),
            "nerf": dict(
                n=24,
                grid=dict(
                    layers=[2, 4, 6],
                    width=[32, 64],
                    freqs=[4, 8],
                    samples=[16, 32],
                    rays=[32, 128],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["layers", "width", "freqs", "samples"],
                fixed={},
            ),
            "linattn": dict(
                n=24,
                grid=dict(
                    layers=[1, 2, 3],
                    d=[32, 64],
                    heads=[2, 4],
                    seq=[16, 32],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                ),
                arch=["layers", "d", "heads", "seq"],
                fixed=dict(vocab=128),
            ),
            "swin": dict(
                n=24,
                grid=dict(
                    layers=[2, 4],
                    d=[32, 64],
                    heads=[2, 4],
                    window=[2, 4],
                    patch=[2, 4],
                    res=[16, 32],
                    batch=[2],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                ),
                arch=["layers", "d", "heads", "window", "patch", "res"],
                fixed=dict(classes=10),
                valid=lambda c: (
                    (c["res"] // c["patch"]) % c["window"] == 0 and (c["res"] // c["patch"]) <= 8
                ),
            ),
            "seq2seq": dict(
                n=24,
                grid=dict(
                    hidden=[32, 64],
                    embed=[16, 32],
                    src_len=[8, 16],
                    tgt_len=[8, 16],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    remat=[0, 1],
                    mode=["train", "infer"],
                ),
                arch=["hidden", "embed", "src_len", "tgt_len"],
                fixed=dict(vocab=64),
            ),
            "simclr": dict(
                n=20,
                grid=dict(
                    layers=[2, 3],
                    width=[64, 128],
                    proj=[16, 32],
                    features=[32, 64],
                    batch=[16, 32],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["layers", "width", "proj", "features"],
                fixed=dict(temperature=0.5),
            ),
            "lru": dict(
                n=24,
                grid=dict(
                    layers=[1, 2, 4],
                    d=[32, 64],
                    state=[16, 32],
                    seq=[16, 64],
                    batch=[2, 4],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                ),
                arch=["layers", "d", "state", "seq"],
                fixed=dict(vocab=128),
            ),
            "vq": dict(
                n=20,
                grid=dict(
                    width=[64, 128],
                    code_dim=[8, 16],
                    codes=[32, 128],
                    features=[32, 64],
                    batch=[16, 64],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                    opt=["adamw", "sgd"],
                ),
                arch=["width", "code_dim", "codes", "features"],
                fixed={},
            ),
            "conformer": dict(
                n=24,
                grid=dict(
                    layers=[1, 2, 3],
                    d=[32, 64],
                    heads=[2, 4],
                    kernel=[3, 7],
                    seq=[16, 32],
                    batch=[2],
                    dtype=["f32", "bf16"],
                    mode=["train", "infer"],
                ),
                arch=["layers", "d", "heads", "kernel", "seq"],
                fixed=dict(features=16, classes=8),
            ),
        }.items()
    },
    "eqx_lstm": dict(
        n=20,
        library="equinox",
        dataset="training",
        grid=dict(
            layers=[1, 2],
            hidden=[16, 32],
            embed=[16],
            seq=[8, 16],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "hidden", "embed", "seq"],
        fixed=dict(vocab=64, classes=4),
    ),
    "flax_cnn": dict(
        n=20,
        library="flax",
        dataset="training",
        grid=dict(
            widths=[[8, 16], [16, 32], [8, 16, 32]],
            res=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["widths", "res"],
        fixed=dict(classes=10, dropout=0.2),
    ),
    "pt_lstm": dict(
        n=16,
        library="torch",
        frontend="pytorch",
        dataset="training",
        grid=dict(
            layers=[1, 2],
            hidden=[16, 32],
            seq=[4, 8],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "hidden", "seq"],
        fixed=dict(embed=16, vocab=64, classes=4),
    ),
    "pt_conv1d": dict(
        n=16,
        library="torch",
        frontend="pytorch",
        dataset="training",
        grid=dict(
            widths=[[8, 16], [16, 32], [8, 16, 32]],
            seq=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["widths", "seq"],
        fixed=dict(features=4, classes=5),
    ),
    "pt_autoencoder": dict(
        n=16,
        library="torch",
        frontend="pytorch",
        dataset="training",
        grid=dict(
            hidden=[32, 64],
            code=[4, 8],
            features=[16, 32],
            batch=[8, 16],
            dtype=["f32", "bf16"],
            mode=["train", "infer"],
        ),
        arch=["hidden", "code", "features"],
        fixed=dict(classes=3),
    ),
    "tf_mlp": dict(
        n=16,
        library="tensorflow",
        frontend="tensorflow",
        dataset="training",
        grid=dict(
            layers=[2, 3],
            hidden=[32, 64],
            features=[8, 32],
            batch=[4, 16],
            dtype=["f32", "bf16", "f16"],
            mode=["train", "infer"],
        ),
        arch=["layers", "hidden", "features"],
        fixed=dict(classes=4),
    ),
    "tf_cnn": dict(
        n=16,
        library="tensorflow",
        frontend="tensorflow",
        dataset="training",
        grid=dict(
            widths=[[8, 16], [16, 32], [8, 16, 32]],
            res=[16, 32],
            batch=[2, 4],
            dtype=["f32", "bf16", "f16"],
            mode=["train", "infer"],
        ),
        arch=["widths", "res"],
        fixed=dict(classes=10),
    ),
}

# The leave-families-out protocol (manifest "heldout_families"): whole families that an agent
# evaluated with `--split heldout` never saw in training, every module of them, both splits. They
# cover a whole library (Keras), a whole frontend (TensorFlow) and one family of each other library
# and of hand-written JAX.
HELDOUT_FAMILIES = [
    "keras_mobilenetv3",
    "keras_efficientnet",
    "keras_convnext",
    "keras_densenet",
    "flax_vae",
    "eqx_wavenet",
    "gnn",
    "unet",
    "tf_mobilenetv2",
    "tf_bert",
    "tf_rnn",
    "tf_dlrm",
]

ABBREV = {
    "layers": "L",
    "d": "d",
    "heads": "h",
    "seq": "s",
    "batch": "b",
    "depth": "r",
    "width": "w",
    "res": "px",
    "stem": "",
    "patch": "p",
    "enc_layers": "e",
    "dec_layers": "x",
    "ff": "ff",
    "gated": "g",
    "src_len": "s",
    "tgt_len": "t",
    "tok_mlp": "tm",
    "ch_mlp": "cm",
    "cell": "",
    "hidden": "H",
    "embed": "E",
    "unroll": "u",
    "ch": "c",
    "mults": "m",
    "attn": "a",
    "nodes": "n",
    "edge_ratio": "er",
    "experts": "E",
    "top_k": "k",
    "ffn": "f",
    "capacity": "cf",
    "alpha": "al",
    "kv_heads": "kv",
    "latent": "z",
    "state": "N",
    "cycle": "cy",
    "tables": "T",
    "emb": "e",
    "mlp": "mlp",
    "widths": "w",
    "features": "F",
    "steps": "st",
    "couplings": "cp",
    "latents": "lat",
    "inputs": "in",
    "set": "n",
    "freqs": "fq",
    "samples": "sp",
    "rays": "ry",
    "window": "win",
    "kernel": "ks",
    "proj": "pj",
    "code_dim": "cd",
    "codes": "K",
    "code": "z",
}


def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def module_name(family, cfg):
    spec = FAMILY_SPECS[family]
    parts = [family, cfg["mode"]]
    for key in spec["grid"]:
        if key in ("mode", "dtype", "remat", "opt"):
            continue
        v = cfg[key]
        if isinstance(v, list):
            v = "".join(map(str, v))
        elif isinstance(v, float):
            v = str(v).replace(".", "p")
        parts.append(f"{ABBREV[key]}{v}")
    parts.append(cfg["dtype"])
    if cfg.get("remat"):
        parts.append("remat")
    if cfg["mode"] == "train" and "opt" in cfg:
        parts.append(cfg["opt"])
    return "_".join(parts)


# The generated training set also draws this many more configurations of each corpus family that
# is not held out: ones the corpus did not pick, of architectures outside the corpus's test split.
TRAINING_MORE_PER_CORPUS_FAMILY = 36


def candidate_configs(family):
    """Every valid configuration of a family's grid, in grid order, without duplicates."""
    spec = FAMILY_SPECS[family]
    keys = list(spec["grid"])
    grid = [dict(zip(keys, vals)) for vals in itertools.product(*spec["grid"].values())]
    seen, cands = set(), []
    for c in grid:
        c = dict(c, **spec["fixed"])
        if c["mode"] == "infer":
            c.pop("remat", None)  # rematerialization only matters for gradients
            c.pop("opt", None)
            if c.get("remat") is None and "remat" in spec["grid"]:
                c["remat"] = 0
        if family == "gnn":
            c["edges"] = c["nodes"] * c["edge_ratio"]
        if not spec.get("valid", lambda c: True)(c) or canon(c) in seen:
            continue
        seen.add(canon(c))
        cands.append(c)
    return cands


def all_configs(dataset="corpus"):
    """[(name, family, cfg)] of a dataset's families ("corpus", "pytorch", "large_steps",
    "training"), in a fixed order."""
    out = []
    for family, spec in FAMILY_SPECS.items():
        if spec.get("dataset", "corpus") != dataset:
            continue
        rng = random.Random(f"hlogym-corpus-{family}")
        for c in rng.sample(candidate_configs(family), spec["n"]):
            out.append((module_name(family, c), family, c))
    if dataset == "training":
        out += more_corpus_configs()
    names = [n for n, _, _ in out]
    assert len(names) == len(set(names)), "duplicate module names"
    return out


def more_corpus_configs():
    """For the training set: more configurations of the corpus's training families, none the
    corpus has and none of an architecture in its test split (so the by-configuration split stays
    unseen too)."""
    corpus = all_configs("corpus")
    split_of = assign_splits(corpus)
    taken = {canon(c) for _, _, c in corpus}
    out = []
    for family, spec in FAMILY_SPECS.items():
        if spec.get("dataset", "corpus") != "corpus" or family in HELDOUT_FAMILIES:
            continue
        cands = [
            c
            for c in candidate_configs(family)
            if canon(c) not in taken and split_of.get(arch_key(family, c)) != "test"
        ]
        rng = random.Random(f"hlogym-training-{family}")
        for c in rng.sample(cands, min(TRAINING_MORE_PER_CORPUS_FAMILY, len(cands))):
            out.append((module_name(family, c), family, c))
    return out


def arch_key(family, cfg):
    return family + ":" + canon({k: cfg[k] for k in FAMILY_SPECS[family]["arch"]})


def assign_splits(configs):
    """Per family, the first TEST_FRACTION of architectures (ordered by sha256) are test."""
    split = {}
    for family in FAMILY_SPECS:
        archs = sorted(
            {arch_key(f, c) for _, f, c in configs if f == family},
            key=lambda a: hashlib.sha256(a.encode()).hexdigest(),
        )
        n_test = max(1, round(TEST_FRACTION * len(archs)))
        for i, a in enumerate(archs):
            split[a] = "test" if i < n_test else "train"
    return split


# ---------------------------------------------------------------------------------------------
# Text helpers: zstd, instruction counting
# ---------------------------------------------------------------------------------------------
def zstd_compress(data: bytes) -> bytes:
    return subprocess.run(
        ["zstd", f"-{ZSTD_LEVEL}", "-q", "-c", "--no-progress"],
        input=data,
        check=True,
        capture_output=True,
    ).stdout


def zstd_decompress(data: bytes) -> bytes:
    return subprocess.run(
        ["zstd", "-d", "-q", "-c"], input=data, check=True, capture_output=True
    ).stdout


def zstd_version():
    out = subprocess.run(["zstd", "--version"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"v(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip()


_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[^\s=(){}]+\s*=\s*(.*)$")
_METADATA = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')


def count_ops(text: str):
    """(op count, opcode histogram) with hlogym's rule: every instruction of every computation."""
    hist = {}
    depth_in_body = False
    for line in text.splitlines():
        s = line.strip()
        if not depth_in_body:
            if s.endswith("{") and not s.startswith("HloModule"):
                depth_in_body = True
            continue
        if s == "}":
            depth_in_body = False
            continue
        m = _INSTR.match(line)
        if not m:
            continue
        rest = m.group(1)
        i = 0
        if rest.startswith("("):
            depth = 0
            for i, ch in enumerate(rest):
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                    if depth == 0:
                        break
            i += 1
        else:
            while i < len(rest) and not rest[i].isspace():
                i += 1
        op = re.match(r"\s*([A-Za-z][\w\-]*)", rest[i:])
        if op:
            hist[op.group(1)] = hist.get(op.group(1), 0) + 1
    return sum(hist.values()), dict(sorted(hist.items()))


def strip_metadata(text: str) -> str:
    return _METADATA.sub("", text)


def sanitize(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


# ---------------------------------------------------------------------------------------------
# Lowering (worker side)
# ---------------------------------------------------------------------------------------------
class TensorFlowLowering:
    """A module TF lowered (tf2xla's HLO text, what a TF user hands to hlogym), compiled by the
    pinned jaxlib's XLA like every corpus module. jaxlib takes StableHLO only (hlogym.xla.Xla
    converts), and that import already canonicalizes the module (a 403-instruction DLRM step
    reaches XLA's passes as 258 instructions), so xla_initial_op_count is below I for these
    modules. TF's own XLA would see the text as it is, but it is an older XLA than the pin
    (no gemv-rewriter, no library filter in tree-reduction-rewriter), so it is not the
    reference."""

    def __init__(self, name, family, cfg):
        env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "TF_CPP_VMODULE")}
        env["TF_CPP_MIN_LOG_LEVEL"] = "2"
        r = subprocess.run(
            [frontend_python("tensorflow"), str(HERE / "tf_models.py"), family, canon(cfg), name],
            env=env,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise SystemExit(f"{name}: tf_models.py failed:\n{r.stderr[-3000:]}")
        self.text = r.stdout

    def as_text(self, dialect="hlo"):
        return self.text

    def compile(self):
        sys.path.insert(0, str(REPO / "python"))
        from hlogym.xla import Xla

        return Xla("cpu").compile(self.text)


@contextlib.contextmanager
def stderr_to(path):
    """Points this process's file descriptor 2, where XLA's C++ logging (the pass log) goes, at
    `path` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


class XlaOptimizedLowering:
    """A corpus module as the pinned XLA's whole CPU pipeline leaves it (fusions, layouts,
    XLA:CPU's own rewrites: what --xla_dump_hlo_as_text writes as after_optimizations), handed
    back to XLA. as_text() is that module as XLA receives it again: jaxlib compiles StableHLO, so a
    module given back goes through its import, which renames instructions and regroups a few (a
    485-instruction GPT-2 dump arrives as 492); storing the imported module makes I the count
    XLA starts from. XLA may fail at or after layout-assignment on such a module; X is read from
    the pass log before that, and compile_error says what failed."""

    def __init__(self, source: Path):
        sys.path.insert(0, str(REPO / "python"))
        from hlogym.xla import Xla

        self.xla = Xla("cpu")
        self.compile_error = None
        source_text = zstd_decompress(source.read_bytes()).decode()
        with stderr_to(os.devnull):  # this compile's pass log is not the reference
            optimized = self.xla.compile(source_text).hlo_modules()[0]
        # the module XLA receives back: jaxlib's HLO -> StableHLO import and its way back to HLO
        # (the reference checks that XLA's first pass sees as many instructions)
        from jaxlib import _jax

        stablehlo = _jax.mlir.hlo_to_stablehlo(optimized.as_serialized_hlo_module_proto())
        received = _jax.mlir.mlir_module_to_xla_computation(
            stablehlo, use_tuple_args=False, return_tuple=False
        )
        self.text = strip_metadata(self.xla.parse(received.as_hlo_text()).to_string())

    def as_text(self, dialect="hlo"):
        return self.text

    def compile(self):
        """In a child process, whose pass log (its stderr) is copied to this one's: XLA aborts on
        a failed CHECK for some of its own modules, after the passes the reference reads."""
        with tempfile.TemporaryDirectory(prefix="hlogym-xla-optimized-") as tmp:
            module = Path(tmp) / "module.hlo"
            module.write_text(self.text)
            r = subprocess.run(
                [sys.executable, "-c", _COMPILE_CHILD, str(REPO / "python"), str(module)],
                capture_output=True,
            )
        sys.stderr.flush()
        os.write(2, r.stderr)
        if r.returncode != 0:
            lines = r.stderr.decode(errors="replace").splitlines()
            why = [ln for ln in lines if "Check failed" in ln or "XlaError" in ln]
            self.compile_error = (why or [f"exit {r.returncode}"])[-1].strip()[:500]


_COMPILE_CHILD = """import sys
sys.path.insert(0, sys.argv[1])
from hlogym.xla import Xla
Xla("cpu").compile(open(sys.argv[2]).read())
"""


class TorchLowering(TensorFlowLowering):
    """A step PyTorch/XLA hands to XLA (torch_models.py, run by HLOGYM_TORCH_PYTHON: a venv with
    requirements-torch.txt, whose torch_xla carries its own, newer XLA than the pin). Its text is
    what PyTorch/XLA prints, read back by the pinned jaxlib like the TensorFlow modules (and as
    canonicalized by its StableHLO import), so X is the pinned XLA's."""

    def __init__(self, name, family, cfg):
        env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "TF_CPP_VMODULE")}
        r = subprocess.run(
            [frontend_python("pytorch"), str(HERE / "torch_models.py"), family, canon(cfg), name],
            env=env,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise SystemExit(f"{name}: torch_models.py failed:\n{r.stderr[-3000:]}")
        self.text = r.stdout


def frontend_python(frontend):
    """The python that lowers a TensorFlow or PyTorch family: HLOGYM_TF_PYTHON (default: this
    one, as when generate.py runs in a venv with requirements-tensorflow.txt) or
    HLOGYM_TORCH_PYTHON (required: torch_xla carries its own XLA)."""
    if frontend == "tensorflow":
        return os.environ.get("HLOGYM_TF_PYTHON", sys.executable)
    python = os.environ.get("HLOGYM_TORCH_PYTHON")
    if not python:
        raise SystemExit(
            "the PyTorch families need HLOGYM_TORCH_PYTHON: the python of a venv "
            "with datasets/corpus/requirements-torch.txt"
        )
    return python


def lower_text(name, family, cfg):
    """The lowered module: `.as_text(dialect="hlo")` and `.compile()` with the pinned XLA."""
    if FAMILY_SPECS[family].get("frontend") == "tensorflow":
        return TensorFlowLowering(name, family, cfg)
    if FAMILY_SPECS[family].get("frontend") == "pytorch":
        return TorchLowering(name, family, cfg)
    import jax

    sys.path.insert(0, str(HERE))
    spec = FAMILY_SPECS[family]
    models = importlib.import_module(
        spec.get("module", "library_models" if spec.get("library") else "models")
    )
    fn, args = models.build(family, cfg)
    fn.__name__ = name
    fn.__qualname__ = name
    return jax.jit(fn).lower(*args)


# ---------------------------------------------------------------------------------------------
# XLA log / dump parsing: hlogym.pass_log (shared with hlogym harvest)
# ---------------------------------------------------------------------------------------------
def reference_from_compile(name, text, log, dump_dir: Path):
    """Trajectory up to layout-assignment, plus candidate (before, after) pass pairs."""
    I, hist0 = count_ops(text)
    events = pass_log.parse_pass_log(log)
    stop = next((i for i, e in enumerate(events) if e["pass"] == "layout-assignment"), None)
    problems = []
    if stop is None:
        problems.append("no layout-assignment in the pass log")
        stop = len(events)
    module = re.match(r"HloModule (\S+?),?\s", text).group(1)  # the dumps' name for it
    dumps = []
    for p in dump_dir.iterdir():
        m = pass_log.DUMP_AFTER_PASS.match(p.name)
        if m and m.group("mod") == module:
            dumps.append((int(m.group("seq")), m.group("pipe"), m.group("after"), p))
    dumps.sort()
    first_count = events[0]["before"] if events else None
    traj, pairs = [], []
    hist = hist0
    if first_count not in (None, I) and dumps:
        # XLA received another module than the text (TF's, through the StableHLO import): the
        # histograms start from XLA's first dump of it
        count, hist = count_ops(dumps[0][3].read_text())
        if count != first_count:
            problems.append(f"first dump has {count} ops, log says {first_count}")
    di = 0
    for i in range(stop):
        e = events[i]
        if e["is_pipeline"]:
            continue
        after = next(
            (
                events[j]["before"]
                for j in range(i + 1, len(events))
                if events[j]["before"] is not None
            ),
            None,
        )
        entry = {
            "pass": e["pass"],
            "pipeline": e["pipeline"],
            "changed": e["changed"],
            "op_count": after,
        }
        if e["changed"]:
            want = sanitize(e["pass"])
            k = di
            while k < len(dumps) and dumps[k][2] != want:
                k += 1
            if k < len(dumps):
                after_text = dumps[k][3].read_text()
                c, h = count_ops(after_text)
                if c != after:
                    problems.append(f"dump after {e['pass']} has {c} ops, log says {after}")
                hist = h
                if k > 0 and e["before"] is not None:
                    before_text = dumps[k - 1][3].read_text()
                    if count_ops(before_text)[0] == e["before"] and before_text != after_text:
                        pairs.append(
                            {
                                "pass": e["pass"],
                                "pipeline": e["pipeline"],
                                "index": len(traj),
                                "before_path": str(dumps[k - 1][3]),
                                "after_path": str(dumps[k][3]),
                                "op_count_before": e["before"],
                                "op_count_after": after,
                            }
                        )
                di = k + 1
            else:
                problems.append(f"no dump for changed pass {e['pass']} (#{len(traj)})")
        entry["histogram"] = hist
        traj.append(entry)
    X = events[stop]["before"] if stop < len(events) else (traj[-1]["op_count"] if traj else I)
    ref = {
        "module": name,
        "I": I,
        "X": X,
        "xla_initial_op_count": first_count,
        "passes": traj,
        "stop_before": "layout-assignment",
        "problems": problems,
    }
    return ref, pairs


# ---------------------------------------------------------------------------------------------
# Worker: lower, write, compile with dumps, parse
# ---------------------------------------------------------------------------------------------
def worker(args):
    import jax  # noqa: F401  (after XLA_FLAGS is set by the parent)

    todo = json.loads(Path(args.worker_input).read_text())
    out_root = Path(todo["out"])
    stage = Path(todo["stage"])
    dump_dir = Path(todo["dump_dir"])
    results = []
    best_pairs = {}  # pass -> [(I, name, pair dict, before text, after text)]
    for name, family, cfg in todo["modules"]:
        t0 = time.time()
        if todo.get("source_root"):
            lowered = XlaOptimizedLowering(Path(todo["source_root"]) / family / f"{name}.hlo.zst")
        else:
            lowered = lower_text(name, family, cfg)
        text = lowered.as_text(dialect="hlo")
        data = text.encode()
        path = out_root / family / f"{name}.hlo.zst"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(zstd_compress(data))
        I, hist = count_ops(text)
        res = {
            "name": name,
            "family": family,
            "config": cfg,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "op_count_py": I,
            "histogram_py": hist,
            "path": str(path.relative_to(out_root)),
        }
        if todo["xla"]:
            for p in dump_dir.iterdir():
                if p.is_dir():
                    shutil.rmtree(p)
                else:
                    p.unlink()
            log_path = stage / f"log_{os.getpid()}.txt"
            with stderr_to(log_path):
                lowered.compile()
            ref, pairs = reference_from_compile(
                name, text, log_path.read_text(errors="replace"), dump_dir
            )
            ref["family"] = family
            rp = out_root / "xla_reference" / f"{name}.json.zst"
            rp.parent.mkdir(parents=True, exist_ok=True)
            rp.write_bytes(
                zstd_compress((json.dumps(ref, sort_keys=True, indent=0) + "\n").encode())
            )
            res["X"] = ref["X"]
            res["xla_initial_op_count"] = ref["xla_initial_op_count"]
            res["xla_passes"] = len(ref["passes"])
            res["xla_changed_passes"] = sum(e["changed"] for e in ref["passes"])
            res["xla_problems"] = ref["problems"]
            if getattr(lowered, "compile_error", None):
                res["xla_compile_error"] = lowered.compile_error
            # keep the first pair per pass of this module; at most PAIRS_PER_PASS smallest overall
            seen = set()
            for pr in pairs:
                if pr["pass"] in seen:
                    continue
                seen.add(pr["pass"])
                lst = best_pairs.setdefault(pr["pass"], [])
                key = (I, name)
                if len(lst) >= PAIRS_PER_PASS and key >= max(x[0] for x in lst):
                    continue
                pdir = stage / "pairs" / sanitize(pr["pass"])
                pdir.mkdir(parents=True, exist_ok=True)
                bt = strip_metadata(Path(pr["before_path"]).read_text())
                at = strip_metadata(Path(pr["after_path"]).read_text())
                (pdir / f"{name}.before.hlo").write_text(bt)
                (pdir / f"{name}.after.hlo").write_text(at)
                meta = {k: v for k, v in pr.items() if not k.endswith("_path")}
                meta["module"] = name
                meta["module_op_count"] = I
                lst.append((key, meta))
                lst.sort(key=lambda x: x[0])
                while len(lst) > PAIRS_PER_PASS:
                    _, gone = lst.pop()
                    for suffix in ("before", "after"):
                        (pdir / f"{gone['module']}.{suffix}.hlo").unlink()
        res["seconds"] = round(time.time() - t0, 2)
        results.append(res)
        print(f"[{os.getpid()}] {name}: I={I} X={res.get('X')} {res['seconds']}s", flush=True)
        with open(stage / f"results_{todo['id']}.jsonl", "a") as f:
            f.write(json.dumps(res, sort_keys=True) + "\n")
    (stage / f"pairs_{todo['id']}.json").write_text(
        json.dumps({p: [m for _, m in lst] for p, lst in best_pairs.items()}, sort_keys=True)
    )


def run_workers(modules, out_root: Path, stage: Path, jobs: int, xla: bool, source_root=None):
    """source_root: a corpus folder; the workers then write XLA's optimized modules of its
    modules (XlaOptimizedLowering) instead of lowering models."""
    procs = []
    for w in range(jobs):
        part = modules[w::jobs]
        if not part:
            continue
        dump_dir = stage / f"dump_{w}"
        dump_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "id": w,
            "modules": part,
            "out": str(out_root),
            "stage": str(stage),
            "dump_dir": str(dump_dir),
            "xla": xla,
            "source_root": str(source_root) if source_root else None,
        }
        inp = stage / f"worker_{w}.json"
        inp.write_text(json.dumps(spec))
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        env.pop("XLA_FLAGS", None)
        if xla:
            env.update(pass_log.dump_environment(str(dump_dir)))
            env["XLA_FLAGS"] = f"{env['XLA_FLAGS']} {EXTRA_XLA_FLAGS}".strip()
        else:
            env["TF_CPP_MIN_LOG_LEVEL"] = "2"
        procs.append(
            subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--worker-input", str(inp)], env=env
            )
        )
    failed = [p.args for p in procs if p.wait() != 0]
    if failed:
        raise SystemExit(f"worker failed: {failed}")
    results = {}
    for f in sorted(stage.glob("results_*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            results[r["name"]] = r
    pairs = {}
    for f in sorted(stage.glob("pairs_*.json")):
        for p, lst in json.loads(f.read_text()).items():
            pairs.setdefault(p, []).extend(lst)
    return results, pairs


# ---------------------------------------------------------------------------------------------
# hlogym cross-check
# ---------------------------------------------------------------------------------------------
def hlogym_stats(paths):
    exe = REPO / "build" / "hlogym"
    if not exe.exists():
        return None
    out = {}
    for i in range(0, len(paths), 50):
        chunk = paths[i : i + 50]
        r = subprocess.run(
            [str(exe), "stats", "--json", *map(str, chunk)], capture_output=True, text=True
        )
        if r.returncode == 0:
            for s in json.loads(r.stdout):
                out[s["file"]] = s
        else:
            for p in chunk:
                r = subprocess.run(
                    [str(exe), "stats", "--json", str(p)], capture_output=True, text=True
                )
                out[str(p)] = (
                    json.loads(r.stdout)[0]
                    if r.returncode == 0
                    else {"error": r.stderr.strip()[:500]}
                )
    return out


def add_op_counts(results, out_root: Path, tf_exempt: bool):
    """I (op_count) from hlogym when it is built, which must agree with the Python count; a
    module XLA received with another count is a problem, except (tf_exempt) TF's and PyTorch's,
    which reach XLA through the StableHLO import (TensorFlowLowering)."""
    stats = hlogym_stats([out_root / results[n]["path"] for n in sorted(results)])
    for n, r in results.items():
        r["op_count"] = r["op_count_py"]
        if stats is not None:
            s = stats.get(str(out_root / r["path"]))
            if s is None or "error" in s:
                r["hlogym_error"] = (s or {}).get("error", "no stats")
                print(f"warning: hlogym cannot read {n}: {r['hlogym_error']}", file=sys.stderr)
            else:
                if s["op_count"] != r["op_count_py"] or s["opcode_histogram"] != r["histogram_py"]:
                    print(
                        f"warning: {n}: hlogym counts {s['op_count']}, python {r['op_count_py']}",
                        file=sys.stderr,
                    )
                r["op_count"] = s["op_count"]
        exempt = tf_exempt and FAMILY_SPECS[r["family"]].get("frontend") in (
            "tensorflow",
            "pytorch",
        )
        if r.get("xla_initial_op_count") not in (None, r["op_count"]) and not exempt:
            r.setdefault("xla_problems", []).append(
                f"XLA received {r['xla_initial_op_count']} instructions, I = {r['op_count']}"
            )


# ---------------------------------------------------------------------------------------------
# XLA's optimized modules: datasets/xla_optimized
# ---------------------------------------------------------------------------------------------
XLA_OPTIMIZED = REPO / "datasets" / "xla_optimized"


def xla_optimized_selection(corpus):
    """The corpus modules whose optimized modules datasets/xla_optimized holds: the test split, and
    every module of the TensorFlow frontend and of Keras (XLA's layouts and fusions of TF's f16
    graphs were the worst misses before this dataset existed)."""
    return sorted(
        n
        for n, e in corpus.items()
        if e["split"] == "test" or e["frontend"] == "tensorflow" or e["library"] == "keras"
    )


def generate_xla_optimized(names, jobs: int, out: Path = XLA_OPTIMIZED):
    """XLA's optimized module of each named corpus module (default: xla_optimized_selection), with
    its own XLA reference, into `out` (datasets/xla_optimized; in place for --only)."""
    corpus = json.loads((HERE / "manifest.json").read_text())["modules"]
    full = not names
    names = names or xla_optimized_selection(corpus)
    unknown = [n for n in names if n not in corpus]
    if unknown:
        raise SystemExit(f"not in the corpus: {unknown}")
    t_start = time.time()
    if full:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    todo = sorted(
        ([n, corpus[n]["family"], corpus[n]["config"]] for n in names),
        key=lambda t: (-corpus[t[0]]["op_count"], t[0]),
    )
    with tempfile.TemporaryDirectory(prefix="hlogym-xla-optimized-") as tmp:
        results, _ = run_workers(todo, out, Path(tmp), jobs, True, source_root=HERE)
    # A module XLA's own verifier rejects before layout-assignment has no X: not kept
    rejected = {
        n: r.get("xla_compile_error", "; ".join(r.get("xla_problems", [])))
        for n, r in results.items()
        if r.get("X") is None or r["xla_problems"]
    }
    for n in rejected:
        r = results.pop(n)
        (out / r["path"]).unlink()
        (out / "xla_reference" / f"{n}.json.zst").unlink()
    add_op_counts(results, out, tf_exempt=False)
    mpath = out / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() and not full else {"modules": {}}
    manifest["xla_rejected"] = dict(
        sorted(
            {
                **{
                    n: why
                    for n, why in manifest.get("xla_rejected", {}).items()
                    if n not in results
                },
                **rejected,
            }.items()
        )
    )
    for n in rejected:
        manifest["modules"].pop(n, None)
    manifest.update(
        {
            "versions": versions(),
            "source": "datasets/corpus",
            "generator": "datasets/corpus/generate.py --xla-optimized",
            "op_count_rule": "instructions in all computations (HloModule::instruction_count)",
        }
    )
    split_of = assign_splits(all_configs())
    for n, r in results.items():
        e = manifest_entry(r, r["family"], r["config"], split_of)
        e["source"] = corpus[n]["path"]
        e["xla_initial_op_count"] = r.get("xla_initial_op_count")
        if r.get("xla_compile_error"):
            e["xla_compile_error"] = r["xla_compile_error"]
        manifest["modules"][n] = e
    write_manifest(mpath, manifest)
    write_xla_optimized_readme(manifest, out)
    print(f"done: {len(results)} modules in {time.time() - t_start:.0f}s", flush=True)


def write_xla_optimized_readme(manifest, out: Path):
    modules = manifest["modules"].values()
    rows = []
    for f in sorted({m["family"] for m in modules}):
        ms = [m for m in modules if m["family"] == f]
        rows.append(
            f"| {f} | {ms[0]['frontend']} | {len(ms)} | "
            f"{statistics.median(m['op_count'] for m in ms):g} | "
            f"{statistics.median(m['X'] for m in ms):g} | "
            f"{sum('xla_compile_error' in m for m in ms)} |"
        )
    texts = [zstd_decompress((out / m["path"]).read_bytes()).decode() for m in modules]
    kinds = sorted({k for t in texts for k in re.findall(r"kind=(k\w+)", t)})
    rejected = manifest["xla_rejected"]
    why = sorted(
        {
            re.sub(r"\s*\([^)]*\)", "", w.split("XLA failed to compile the module: ")[-1]).replace(
                "INTERNAL: during context [hlo verifier]: ", "XLA's verifier: "
            )
            for w in rejected.values()
        }
    )
    (out / "README.md").write_text(
        XLA_OPTIMIZED_README.format(
            n=len(manifest["modules"]),
            nfam=len(rows),
            rows="\n".join(rows),
            jaxlib=manifest["versions"]["jaxlib"],
            kinds=", ".join(kinds),
            nfusion=sum(" fusion(" in t for t in texts),
            nlayout=sum(map(has_non_default_layout, texts)),
            nfail=sum("xla_compile_error" in m for m in modules),
            nsource=len(manifest["modules"]) + len(rejected),
            nrejected=len(rejected),
            why="; ".join(why) or "none",
        )
    )


def has_non_default_layout(text: str) -> bool:
    """Whether an array shape in the text has a layout other than {n-1,...,0}."""
    for m in re.finditer(r"\]\{(\d+(?:,\d+)+)[}:]", text):
        dims = [int(d) for d in m.group(1).split(",")]
        if dims != sorted(dims, reverse=True):
            return True
    return False


XLA_OPTIMIZED_README = """# XLA's optimized modules, given back to XLA

Written by `datasets/corpus/generate.py --xla-optimized` (do not edit by hand).

Modules of a kind the corpus (`datasets/corpus`) does not hold: what real XLA's whole CPU
pipeline (jaxlib {jaxlib}) makes of {n} corpus modules ({nfam} families; the test split and every
TensorFlow and Keras module), the module that `--xla_dump_hlo_as_text` writes as
`after_optimizations`. They carry what the corpus's modules
do not: fusions ({nfusion} of the {n} modules; kinds {kinds}), non-default layouts ({nlayout}
modules), bitcasts, copies and XLA:CPU's own rewrites. Each is stored as XLA receives it when it
is handed back (through jaxlib's StableHLO import), so I is the count XLA's passes start from, and
each has its own XLA reference: the pass log of XLA's CPU pipeline run on it, up to
layout-assignment.

XLA itself does not always take its own output back. Of the {nsource} modules, {nrejected} are not
kept: XLA rejects them before layout-assignment, so they have no X (`xla_rejected` in the
manifest has XLA's message; here: {why}).
On {nfail} of the {n} kept modules a pass at or after layout-assignment fails
(`xla_compile_error`); X, read before layout-assignment, is there for every kept module.

`bench/default_vs_xla.py` measures hlogym's `xla-cpu-default` against X here as on the corpus;
`tests/passes/idempotence_test.cc` runs every pass twice on these modules too.

## Layout

- `<family>/<name>.hlo.zst`: the optimized module of the corpus module `<name>` (same name),
  metadata stripped.
- `manifest.json`: as the corpus's, plus `source` (the corpus module), `xla_initial_op_count`
  (equal to I) and `xla_compile_error` where XLA failed after its target-independent passes.
- `xla_reference/<name>.json.zst`: XLA's pass trajectory, as in the corpus.

## Families

| family | frontend | modules | median I | median X | XLA fails after its passes |
|---|---|---|---|---|---|
{rows}

## Regenerate

    .venv/bin/python datasets/corpus/generate.py --xla-optimized              # all
    .venv/bin/python datasets/corpus/generate.py --xla-optimized --only NAME  # some, in place
"""


# ---------------------------------------------------------------------------------------------
# The PyTorch/XLA frontend: datasets/pytorch
# ---------------------------------------------------------------------------------------------
PYTORCH = REPO / "datasets" / "pytorch"
LARGE_STEPS = REPO / "datasets" / "large_steps"
TRAINING = REPO / "build" / "datasets" / "training"  # generated, not committed


def generate_dataset(dataset, names, jobs: int, out: Path):
    """The modules of a dataset of its own ("pytorch", "large_steps"; or the named ones, in
    place), each with its XLA reference, into `out`: every family held out, none trained on."""
    configs = all_configs(dataset)
    training = dataset == "training"
    by_name = {n: [n, f, c] for n, f, c in configs}
    unknown = [n for n in names or [] if n not in by_name]
    if unknown:
        raise SystemExit(f"not a module of {dataset}: {unknown}")
    full = not names
    t_start = time.time()
    if full:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    todo = [by_name[n] for n in names] if names else [list(t) for t in configs]
    with tempfile.TemporaryDirectory(prefix=f"hlogym-{dataset}-") as tmp:
        results, _ = run_workers(todo, out, Path(tmp), jobs, True)
    add_op_counts(results, out, tf_exempt=True)
    mpath = out / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() and not full else {"modules": {}}
    split_of = defaultdict(lambda: "train") if training else assign_splits(configs)
    for n, r in results.items():
        e = manifest_entry(r, r["family"], r["config"], split_of)
        e["xla_initial_op_count"] = r.get("xla_initial_op_count")
        manifest["modules"][n] = e
    # the versions of the libraries the modules it holds were written with: a run of --only
    # JAX modules does not need the PyTorch venv
    written_families = {m["family"] for m in manifest["modules"].values()}
    manifest.update(
        {
            "versions": {**versions(), **library_versions(written_families)},
            "generator": f"datasets/corpus/generate.py --{dataset.replace('_', '-')}",
            "op_count_rule": "instructions in all computations (HloModule::instruction_count)",
            # a dataset to judge agents on holds every family out; the training set none
            "heldout_families": [] if training else sorted({f for _, f, _ in configs}),
        }
    )
    write_manifest(mpath, manifest)
    write_dataset_readme(dataset, manifest, out)
    print(f"done: {len(results)} modules in {time.time() - t_start:.0f}s", flush=True)


def write_dataset_readme(dataset, manifest, out: Path):
    modules = manifest["modules"].values()
    rows = []
    for f in sorted({m["family"] for m in modules}):
        ms = [m for m in modules if m["family"] == f]
        rows.append(
            f"| {f} | {len(ms)} | {sum(m['config']['mode'] == 'train' for m in ms)} | "
            f"{statistics.median(m['op_count'] for m in ms):g} | "
            f"{statistics.median(m['X'] for m in ms):g} |"
        )
    counts = [m["op_count"] for m in modules]
    template = {
        "pytorch": PYTORCH_README,
        "large_steps": LARGE_STEPS_README,
        "training": TRAINING_README,
    }[dataset]
    # a frontend with no module here (a run of --only) has no version to name
    fields = defaultdict(lambda: "(none here)", manifest["versions"])
    fields.update(
        n=len(manifest["modules"]),
        nfam=len(rows),
        rows="\n".join(rows),
        smallest=min(counts),
        largest=max(counts),
    )
    (out / "README.md").write_text(template.format_map(fields))


PYTORCH_README = """# PyTorch/XLA: the third frontend

Written by `datasets/corpus/generate.py --pytorch` (do not edit by hand).

{n} modules from {nfam} families of ordinary PyTorch code run on an XLA device with torch {torch}
and torch_xla {torch_xla} (`datasets/corpus/torch_models.py`, pinned in
`datasets/corpus/requirements-torch.txt`): for each step, the graph `xm.mark_step()` would hand to
XLA (the loss or output, and for a training step every parameter, gradient, batch-norm statistic
and optimizer state it updates), as PyTorch/XLA prints it (`torch_xla._XLAC._get_xla_tensors_hlo`,
what `XLA_SAVE_TENSORS_FMT=hlo` writes), renamed and with source paths dropped. Its HLO is unlike
JAX's and TensorFlow's: parameters, inputs and optimizer scalars all arrive as parameters, aten op
names in the metadata, a tuple of every live tensor as the result, gradient layouts such as
`{{0,1}}` in the entry's layout. No agent is trained on any of it (the manifest's
`heldout_families` is every family): `hlogym eval --suite datasets/pytorch` judges agents on a
frontend they never saw.

X is the pinned XLA's (jaxlib {jaxlib}), as for the corpus's TensorFlow modules: jaxlib reads
PyTorch/XLA's text back through its StableHLO import, which canonicalizes a little before XLA's
passes run (`xla_initial_op_count`). torch_xla's own XLA is newer than the pin.

## Families

| family | modules | training steps | median I | median X |
|---|---|---|---|---|
{rows}

- `pt_mlp`: an MLP classifier (nn.Linear, nn.LayerNorm, nn.GELU), SGD with momentum.
- `pt_transformer`: an `nn.TransformerEncoder` classifier (pre-norm, batch_first), AdamW.
- `pt_cnn`: a small CNN (nn.Conv2d, nn.BatchNorm2d, nn.MaxPool2d), SGD; inference in eval mode.

## Layout

As the corpus's: `<family>/<name>.hlo.zst`, `manifest.json` (with `xla_initial_op_count`), and
`xla_reference/<name>.json.zst` (XLA's pass trajectory up to layout-assignment).

## Regenerate

    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install -r datasets/corpus/requirements-torch.txt
    HLOGYM_TORCH_PYTHON=/tmp/torchvenv/bin/python .venv/bin/python datasets/corpus/generate.py --pytorch
"""


LARGE_STEPS_README = """# Large training steps

Written by `datasets/corpus/generate.py --large-steps` (do not edit by hand).

{n} training steps of {smallest} to {largest} instructions from {nfam} families written with Flax
{flax} and optax {optax} (`datasets/corpus/library_models.py`, pinned in
`datasets/corpus/requirements-libraries.txt`), lowered by jax {jax}: the graphs users spend their
compute on, where a search's cost grows with the graph. No agent is trained on any of it (the
manifest's `heldout_families` is every family): `hlogym eval --suite large_steps` judges agents on
graphs larger than most of the corpus, from families they never saw.

## Families

| family | modules | training steps | median I | median X |
|---|---|---|---|---|
{rows}

- `flax_resnet`: ResNet-34 (basic blocks) and ResNet-50 (bottlenecks) in flax.linen, BatchNorm
  with its running statistics as a mutable collection, weight decay in the loss, optax SGD with
  Nesterov momentum or AdamW; f32 and bf16.
- `nnx_vit`: a ViT in flax.nnx (patch convolution, class token, nnx.MultiHeadAttention, pre-norm
  GELU MLP blocks) of 8 to 12 layers, optax AdamW or SGD with momentum; f32 and bf16.

## Layout

As the corpus's: `<family>/<name>.hlo.zst`, `manifest.json`, and `xla_reference/<name>.json.zst`
(XLA's pass trajectory up to layout-assignment; X is the op count layout-assignment receives).

## Regenerate

    python3 -m venv /tmp/libvenv
    /tmp/libvenv/bin/pip install -r requirements.txt -r datasets/corpus/requirements-libraries.txt
    /tmp/libvenv/bin/python datasets/corpus/generate.py --large-steps
"""


TRAINING_README = """# The generated training set

Written by `scripts/training_data.sh` (`datasets/corpus/generate.py --training`; do not edit by
hand). Not committed: it is generated where it is used, deterministically (same pins, same bytes).

{n} modules from {nfam} families, for training learned pass orderers beside the corpus's
`--split train-seen` (together 1,000+ graphs): every training family of the corpus again with
configurations the corpus does not have (none of an architecture in its test split), and families
of their own from hand-written JAX (`training_models.py`), Flax and Equinox
(`library_models.py`), PyTorch/XLA (`torch_models.py`) and plain TensorFlow without Keras
(`tf_models.py`), lowered by jax {jax}, torch_xla {torch_xla} and TensorFlow {tensorflow}. No family
of the corpus's `heldout_families`, no Keras (a held-out library), and nothing of the datasets that
judge agents (PyTorch/XLA's `pt_mlp`, `pt_transformer`, `pt_cnn`): held-out sets stay unseen.
Every module is in the `train` split and the manifest holds no family out.

    build/hlogym train --suite all build/datasets/training --split train-seen ...

## Families

| family | modules | training steps | median I | median X |
|---|---|---|---|---|
{rows}

## Layout

As the corpus's: `<family>/<name>.hlo.zst`, `manifest.json` (with `xla_initial_op_count`), and
`xla_reference/<name>.json.zst` (XLA's pass trajectory up to layout-assignment).
"""


# ---------------------------------------------------------------------------------------------
# Manifest, suites, README
# ---------------------------------------------------------------------------------------------
def versions():
    import jax
    import jaxlib
    import numpy

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": numpy.__version__,
        "python": ".".join(map(str, sys.version_info[:2])),
        "zstd": zstd_version(),
        "zstd_level": ZSTD_LEVEL,
        "backend": "cpu",
    }


def library_versions(families):
    """Versions of the model libraries the given families are written with."""
    from importlib.metadata import version

    libs = {FAMILY_SPECS[f].get("library") for f in families} - {None}
    out = {}
    # the frontends' libraries live in venvs of their own: ask their python
    for lib, frontend, packages in (
        ("torch", "pytorch", {"torch": "torch", "torch_xla": "torch_xla"}),
        ("tensorflow", "tensorflow", {"tensorflow": "tensorflow-cpu"}),
    ):
        if lib not in libs:
            continue
        libs.remove(lib)
        r = subprocess.run(
            [
                frontend_python(frontend),
                "-c",
                "import json, sys, importlib.metadata as m; print(json.dumps("
                "{k: m.version(p) for k, p in json.loads(sys.argv[1]).items()}))",
                json.dumps(packages),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        out.update(json.loads(r.stdout))
    out.update({lib: version(lib) for lib in sorted(libs)})
    if libs & {"flax", "equinox"}:
        out["optax"] = version("optax")
    return out


def write_manifest(path: Path, manifest):
    """A dataset's manifest.json: modules sorted by name, keys sorted, the same bytes every run."""
    manifest["modules"] = dict(sorted(manifest["modules"].items()))
    path.write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")


def manifest_entry(r, family, cfg, split_of):
    a = arch_key(family, cfg)
    suites = ["diverse"] + (["gpt2"] if family == "gpt2" else [])
    e = {
        "family": family,
        "config": cfg,
        "config_group": a,
        "split": split_of[a],
        "suites": suites,
        "frontend": FAMILY_SPECS[family].get("frontend", "jax"),
        "library": FAMILY_SPECS[family].get("library", "jax"),
        "path": r["path"],
        "sha256": r["sha256"],
        "bytes": r["bytes"],
        "op_count": r["op_count"],
        "X": r.get("X"),
        "xla_reference": f"xla_reference/{r['name']}.json.zst",
        "xla_passes_before_layout_assignment": r.get("xla_passes"),
        "xla_changed_passes": r.get("xla_changed_passes"),
    }
    if r.get("xla_problems"):
        e["xla_problems"] = r["xla_problems"]
    if r.get("hlogym_error"):
        e["hlogym_error"] = r["hlogym_error"]
    return e


def pick_default_suite(manifest):
    gpt = sorted(
        (
            (m["op_count"], n)
            for n, m in manifest.items()
            if m["family"] == "gpt2" and m["split"] == "test"
        )
    )
    k = 12
    if len(gpt) <= k:
        return [n for _, n in gpt]
    idx = [round(i * (len(gpt) - 1) / (k - 1)) for i in range(k)]
    return [gpt[i][1] for i in idx]


def write_readme(manifest, vers, pairs_index, total_bytes, gen_seconds):
    fams = sorted({m["family"] for m in manifest.values()})
    rows = []
    for f in fams:
        ms = [m for m in manifest.values() if m["family"] == f]
        tr = sum(m["split"] == "train" for m in ms)
        te = len(ms) - tr
        I = statistics.median(m["op_count"] for m in ms)
        Xs = [m["X"] for m in ms if m["X"] is not None]
        X = statistics.median(Xs) if Xs else float("nan")
        lib = FAMILY_SPECS[f].get("library", "jax")
        frontend = FAMILY_SPECS[f].get("frontend", "jax")
        held = "yes" if f in HELDOUT_FAMILIES else ""
        rows.append(
            f"| {f} | {frontend} | {lib} | {held} | {len(ms)} | {tr} | {te} | {I:g} | {X:g} | "
            f"{statistics.median(m['bytes'] for m in ms) / 1024:.0f} |"
        )
    n = len(manifest)
    ngpt = sum(m["family"] == "gpt2" for m in manifest.values())
    n_pairs = sum(len(v) for v in pairs_index.values())
    text = README.format(
        n=n,
        nfam=len(fams),
        ngpt=ngpt,
        rows="\n".join(rows),
        jax=vers["jax"],
        jaxlib=vers["jaxlib"],
        zstd=vers["zstd"],
        mb=total_bytes / 1e6,
        npass=len(pairs_index),
        npairs=n_pairs,
        ntrain=sum(m["split"] == "train" for m in manifest.values()),
        ntest=sum(m["split"] == "test" for m in manifest.values()),
        heldout=", ".join(HELDOUT_FAMILIES),
        nheld=sum(m["family"] in HELDOUT_FAMILIES for m in manifest.values()),
        nseen=sum(
            m["family"] not in HELDOUT_FAMILIES and m["split"] == "train" for m in manifest.values()
        ),
        libs=", ".join(
            f"{k} {v}"
            for k, v in sorted(vers.items())
            if k in ("keras", "flax", "equinox", "optax")
        ),
        ntf=sum(
            FAMILY_SPECS[m["family"]].get("frontend") == "tensorflow" for m in manifest.values()
        ),
        tf=vers.get("tensorflow", "?"),
    )
    (HERE / "README.md").write_text(text)


README = """# hlogym corpus: real JAX and TensorFlow models as pre-optimization HLO, with real XLA's results

Written by `datasets/corpus/generate.py` (do not edit by hand; the tables below are regenerated).

{n} modules from {nfam} families ({ngpt} GPT-2), lowered with jax {jax} / jaxlib {jaxlib} (pinned in
requirements.txt). Ten families are hand-written JAX (`models.py`): full training steps (forward,
backward, global-norm clipping, AdamW or SGD-momentum update) and inference forwards, f32 and bf16
(mixed precision: f32 master weights), with and without rematerialization (`jax.checkpoint`). Eight
are written with the model libraries users run (`library_models.py`; {libs}, pinned in
`requirements-libraries.txt`): Keras 3 applications on the JAX backend (inference), a Flax NNX
Llama-style decoder, a Flax Linen VAE, an Equinox Mamba-style selective SSM and an Equinox WaveNet.
Four ({ntf} modules) come from a second frontend, TensorFlow {tf} (`tf_models.py`, pinned in
`requirements-tensorflow.txt`): what `tf.function(jit_compile=True)` hands to XLA, read with
`experimental_get_compiler_ir(...)(stage="hlo_serialized")`: Keras 3's MobileNetV2 on the TensorFlow backend,
a BERT-style encoder and an LSTM/GRU classifier of Keras layers (training steps with
`tf.GradientTape` and Keras optimizers), and a DLRM-style recommender in plain TensorFlow (sparse
embedding updates as scatters); f32, bf16 and f16 (Keras's mixed_float16).
Corpus size on disk: {mb:.1f} MB (zstd {zstd}, level 19).

## Layout

- `<family>/<name>.hlo.zst` — `jax.jit(step).lower(*ShapeDtypeStructs).as_text(dialect="hlo")`;
  for the TensorFlow families TF's own HLO, renamed to the corpus name, source paths dropped.
  hlogym reads `.zst` directly: `build/hlogym stats datasets/corpus/gpt2/<name>.hlo.zst`.
- `manifest.json` — `versions` and, per module: family, config, config_group (the architecture),
  split, suites (`diverse` for all, also `gpt2` for GPT-2), frontend, path, sha256 and bytes of the
  uncompressed text, `op_count` (I: every instruction of every computation, as `hlogym stats`
  counts), `X` and the XLA reference file.
- `xla_reference/<name>.json.zst` — real XLA's CPU compiler on that module, every pass it ran up to
  (not including) `layout-assignment`, in order: `pass`, `pipeline` (nested pipelines joined by
  `/`; fixed-point pipelines appear once per iteration), `changed`, `op_count` and `histogram` after
  the pass. `X` = op count after the last pass before layout-assignment; `xla_initial_op_count` is
  XLA's count of the module it received: equal to I, except for the TensorFlow families. jaxlib
  compiles StableHLO only, and its import of TF's HLO text already canonicalizes it (fewer
  instructions), as it does for every module a user hands back through `hlogym.xla`. TF's own XLA
  would take the text as it is, but it is older than the pin (no gemv-rewriter, no library filter
  in tree-reduction-rewriter), so X is the pinned XLA's for every family.
- `xla_pass_pairs/<pass>/<module>.before.hlo.zst` / `.after.hlo.zst` and `xla_pass_pairs/index.json`
  — for every XLA pass (before layout-assignment) that changed some module: up to 3 (before, after)
  module pairs, from the 3 smallest modules it changed (the first time it changed each), metadata
  stripped. {npass} passes, {npairs} pairs.
- `default_suite.txt` — 12 GPT-2 test-split modules spread over the size range (the main job's
  default benchmarks).

## Splits

Split by configuration: per family, the architectures (config keys that define the model: layers,
width, heads, sequence length, ...) are ordered by sha256 and the first 25% are `test`; every
variant of a test architecture (batch, dtype, remat, optimizer, train/infer) is in test, so no test
graph's architecture is seen in training. The `gpt2` suite is the GPT-2 family, the `diverse` suite
is everything. Train {ntrain}, test {ntest}.

Leave families out: the manifest's `heldout_families` ({heldout}) are never trained on, not even
their train split: `--split heldout` is every module of them ({nheld}), `--split train-seen` the
train split of the other families ({nseen}, what the shipped agents train on). They hold out a whole
library (Keras), the whole TensorFlow frontend, and one family of each other library and of
hand-written JAX.

## Families

| family | frontend | library | held out | modules | train | test | median I | median X | median KB |
|---|---|---|---|---|---|---|---|---|---|
{rows}

GPT-2 (pre-LN decoder, tied head), BERT masked-LM (post-LN, MLM transform head, pooler), ResNet-18 /
ResNet-50 (and a 26-layer bottleneck variant) with batch norm in train mode (running stats updated)
and inference mode, ViT (patch conv, class token, label smoothing), T5 encoder-decoder (RMSNorm,
relative position buckets, ReLU or gated-GELU FFN), MLP-Mixer, LSTM/GRU language models with
`lax.scan` (while loops), a DDPM UNet (GroupNorm res blocks, timestep embedding, optional attention,
one sampling step for inference), a GraphNet-style graph network (gathers + segment_sum scatters),
and a mixture-of-experts decoder (top-k routing with capacity, scatter dispatch, gather combine,
load-balancing loss).

## Regenerate

    scripts/setup.sh --no-build                      # the pinned venv
    .venv/bin/python datasets/corpus/generate.py     # everything, 2 worker processes (--jobs N)
    .venv/bin/python datasets/corpus/generate.py --only NAME...   # some modules, in place
    .venv/bin/python datasets/corpus/generate.py --only NAME... --out DIR --no-xla

The library families need their libraries, which the project's venv does not carry: make a venv
with `requirements.txt` and `requirements-libraries.txt` and run generate.py with its python
(`--only` with their names, then `--refresh` to rewrite the derived manifest fields and this page).
The TensorFlow families need a venv of their own, with `requirements.txt` and
`requirements-tensorflow.txt` (TF's pins conflict with the libraries').

Same versions give the same bytes (module text, XLA references, pairs, manifest); the test
`tests/python/test_corpus.py` regenerates a few modules and compares. `--only` in place updates those
modules, their XLA references and manifest entries, not the pass pairs or this README.
"""


def corpus_bytes():
    return sum(
        p.stat().st_size
        for p in HERE.rglob("*")
        if p.is_file()
        and not p.name.endswith((".py", ".md", ".txt"))
        and "__pycache__" not in p.parts
    )


def refresh(configs):
    """Derived fields and README from the committed corpus (after --only added modules)."""
    mpath = HERE / "manifest.json"
    manifest = json.loads(mpath.read_text())
    split_of = assign_splits(configs)
    for n, f, c in configs:
        e = manifest["modules"].get(n)
        if e is None:
            raise SystemExit(f"{n} is configured but not generated (generate.py --only {n})")
        e["split"] = split_of[arch_key(f, c)]
        e["library"] = FAMILY_SPECS[f].get("library", "jax")
        e["frontend"] = FAMILY_SPECS[f].get("frontend", "jax")
    manifest["heldout_families"] = HELDOUT_FAMILIES
    mpath.write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    pairs = json.loads((HERE / "xla_pass_pairs" / "index.json").read_text())
    write_readme(manifest["modules"], manifest["versions"], pairs, corpus_bytes(), 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--out", help="output root (default: datasets/corpus)")
    ap.add_argument("--no-xla", action="store_true", help="skip the XLA reference")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--list", action="store_true", help="print the module names and exit")
    ap.add_argument(
        "--refresh",
        action="store_true",
        help="rewrite the manifest's derived fields (split, library, held-out "
        "families) and README.md from the committed modules, without lowering",
    )
    ap.add_argument(
        "--xla-optimized",
        action="store_true",
        help="write datasets/xla_optimized: XLA's optimized module of each corpus "
        "module it selects (or of --only), with its own XLA reference",
    )
    ap.add_argument(
        "--pytorch",
        action="store_true",
        help="write datasets/pytorch: the PyTorch/XLA families' modules (or --only), "
        "with their XLA references (needs HLOGYM_TORCH_PYTHON)",
    )
    ap.add_argument(
        "--large-steps",
        action="store_true",
        help="write datasets/large_steps: large Flax training steps (or --only), with their "
        "XLA references (run by a python with requirements-libraries.txt)",
    )
    ap.add_argument(
        "--training",
        action="store_true",
        help="write the generated training set (default build/datasets/training; or --only): "
        "more families and configurations for learned pass ordering, with their XLA "
        "references (run by a python with requirements-libraries.txt, with "
        "HLOGYM_TF_PYTHON and HLOGYM_TORCH_PYTHON; scripts/training_data.sh does it all)",
    )
    ap.add_argument("--worker-input", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker_input:
        return worker(args)
    for dataset, folder in (
        ("pytorch", PYTORCH),
        ("large_steps", LARGE_STEPS),
        ("training", TRAINING),
    ):
        if getattr(args, dataset):
            out = Path(args.out).resolve() if args.out else folder
            return generate_dataset(dataset, args.only, args.jobs, out)
    if args.xla_optimized:
        return generate_xla_optimized(
            args.only, args.jobs, Path(args.out).resolve() if args.out else XLA_OPTIMIZED
        )

    t_start = time.time()
    configs = all_configs()
    if args.list:
        for n, f, c in configs:
            print(n, f, canon(c))
        return
    by_name = {n: (n, f, c) for n, f, c in configs}
    if args.refresh:
        return refresh(configs)
    out_root = Path(args.out).resolve() if args.out else HERE
    if args.only:
        unknown = [n for n in args.only if n not in by_name]
        if unknown:
            raise SystemExit(f"unknown module(s): {unknown}")
        todo = [by_name[n] for n in args.only]
    else:
        todo = configs
    if args.no_xla and out_root == HERE:
        raise SystemExit("--no-xla needs --out (the committed corpus always has XLA references)")
    full = not args.only and out_root == HERE
    if full:
        for d in list(FAMILY_SPECS) + ["xla_reference", "xla_pass_pairs"]:
            shutil.rmtree(HERE / d, ignore_errors=True)
    # biggest first so that the two workers finish together
    order = sorted(todo, key=lambda t: (-(t[2].get("layers", 2) * t[2].get("batch", 2)), t[0]))
    with tempfile.TemporaryDirectory(prefix="hlogym-corpus-") as tmp:
        stage = Path(tmp)
        results, pairs = run_workers(
            [list(t) for t in order], out_root, stage, args.jobs, not args.no_xla
        )
        pair_index = {}
        if full:
            for p in sorted(pairs):
                chosen = sorted(pairs[p], key=lambda m: (m["module_op_count"], m["module"]))
                chosen = chosen[:PAIRS_PER_PASS]
                pdir = HERE / "xla_pass_pairs" / sanitize(p)
                pdir.mkdir(parents=True, exist_ok=True)
                for m in chosen:
                    for suffix in ("before", "after"):
                        src = stage / "pairs" / sanitize(p) / f"{m['module']}.{suffix}.hlo"
                        data = src.read_bytes()
                        dst = pdir / f"{m['module']}.{suffix}.hlo.zst"
                        dst.write_bytes(zstd_compress(data))
                        m[suffix] = str(dst.relative_to(HERE))
                        m[f"{suffix}_sha256"] = hashlib.sha256(data).hexdigest()
                pair_index[p] = chosen
            (HERE / "xla_pass_pairs" / "index.json").write_text(
                json.dumps(pair_index, sort_keys=True, indent=1) + "\n"
            )

    if args.out:
        for n in sorted(results):
            print(f"{n} {results[n]['sha256']} {results[n]['path']}")
        if args.out:
            return

    add_op_counts(results, out_root, tf_exempt=True)

    split_of = assign_splits(configs)
    mpath = HERE / "manifest.json"
    if full:
        manifest = {
            "versions": versions(),
            "generator": "datasets/corpus/generate.py",
            "op_count_rule": "instructions in all computations (HloModule::instruction_count)",
            "modules": {},
        }
    else:
        manifest = json.loads(mpath.read_text())
    for n, r in results.items():
        _, f, c = by_name[n]
        manifest["modules"][n] = manifest_entry(r, f, c, split_of)
    manifest["versions"].update(library_versions({by_name[n][1] for n in results}))
    manifest["heldout_families"] = HELDOUT_FAMILIES
    write_manifest(mpath, manifest)
    if full:
        suite = pick_default_suite(manifest["modules"])
        (HERE / "default_suite.txt").write_text(
            "# Default GPT-2 benchmark suite (test split, spread over sizes); paths relative to the\n"
            "# repository root. Written by datasets/corpus/generate.py.\n"
            + "".join(f"datasets/corpus/{manifest['modules'][n]['path']}\n" for n in suite)
        )
        write_readme(
            manifest["modules"],
            manifest["versions"],
            pair_index,
            corpus_bytes(),
            time.time() - t_start,
        )
    print(f"done: {len(results)} modules in {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
