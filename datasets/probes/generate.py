"""Makes datasets/probes: modules of kinds the corpus's generator does not write, each with the
pinned XLA's reference, to measure hlogym's default pipeline against XLA on other people's kinds of
graphs (issue 42). One folder per probe, each a dataset `hlogym harvest` wrote (manifest,
<family>/<name>.hlo.zst, xla_reference/<name>.json.zst), from a program in examples/harvest run in a
venv of its own under build/venvs with the probe's pinned requirements:

- transformer_variants: plain JAX (the project's venv): Gemma-2- and Mistral-style decoders
  (sliding-window attention, soft caps, bf16 mixed-precision training steps), bf16 ViT inference,
  an image encoder with windowed attention.
- library_transformers: penzai's decoders and Hugging Face's Flax ViT
  (requirements-libraries.txt).
- ode_solvers: diffrax's fixed and adaptive step ODE and SDE solves, forward and gradient
  (requirements-ode.txt).
- probabilistic: NumPyro's NUTS and HMC samplers, SVI steps and a predictive pass on a hierarchical
  model and a Bayesian MLP (requirements-probabilistic.txt).
- jax_simulation: examples/harvest/jax_simulation.py's programs that are not network training:
  gymnax environments rolled out under lax.scan with a PPO update, JAX MD's molecular dynamics
  (neighbor lists, NVT/NVE/Langevin, FIRE, three-body forces), evosax's evolution strategies and
  BlackJAX's samplers (requirements-simulation.txt); modules of 20 instructions or more.
- quantized_and_puzzles: examples/harvest/jax_quantized_and_puzzles.py: Qwix's int8 and fp8
  quantized training steps and post-training quantized inference of a Flax MLP and attention
  block, and Jumanji's combinatorial environments stepped by random valid actions
  (requirements-quantized-puzzles.txt); modules of 20 instructions or more.
- mjx_physics: examples/harvest/jax_mjx_physics.py: MuJoCo MJX's rigid-body physics (contacts,
  joint trees, the Newton and conjugate-gradient solvers): rollouts under lax.scan, a batch of
  walkers stepped by a policy network as an RL environment, forward-mode derivatives through
  steps, batched kinematics (requirements-mjx-physics.txt).
- jax_scientific: examples/harvest/jax_scientific.py: mctx's tree searches, pgx's board games,
  ott-jax's Sinkhorn, optimistix's and lineax's solvers, dm-pix's augmentations, an e3nn-jax
  equivariant network's step, interpax's splines (requirements-scientific.txt).
- jax_quantum: examples/harvest/jax_quantum.py (dynamiqs, NetKet and PennyLane, complex-valued,
  and a split-step Fourier solve; requirements-quantum.txt); modules of 20 instructions or more.
- optimizers: training steps with optax's optimizers (clipping and schedules, Lion, Adafactor,
  LAMB, gradient accumulation, masked weight decay, ...) and Flax's nn.scan over stacked layers,
  with and without remat (requirements-libraries.txt).
- more_jax_libraries: Haiku's ResNet-18 and LSTM, a jraph GraphNetwork, a Flax NNX and a Keras 3
  training step, jax.scipy's BFGS, jax.experimental.ode's solve and adjoint, optax's L-BFGS,
  linear-algebra gradients, per-example gradients, a Hessian, segment reductions and KV-cache
  decoding (requirements-more-libraries.txt).
- partitioned: programs compiled for 4 devices, which XLA's SPMD partitioner splits: jax.pmap
  and jax.shard_map training steps (data, tensor and ZeRO-style parallelism, a ring of
  collective permutes, GSPMD's form once), all of it manual work (requirements-libraries.txt).
- jax_data_parallel: jax.jit steps and inference with the batch split over 4 devices
  (NamedSharding inputs): XLA's partitioner places the all-reduces (the project's venv).
- jax_tensor_parallel: jax.jit steps with the weights split over 4 devices (Megatron-style MLP,
  attention heads, a vocabulary-parallel output layer, a bf16 block, an embedding split along
  its features), the activations whole (the project's venv).
- jax_fsdp: jax.jit programs with the batch and the weights split along one mesh axis (FSDP
  inference with biases and layer norms; a weight split by columns beside the split batch, once
  as a training step), which XLA's partitioner reshards with all-gathers (the project's venv).
- jax_2d_mesh: jax.jit programs on a 2 x 2 mesh ("data", "model"): the batch split along one
  axis, Megatron-style weights, attention heads and a vocabulary along the other, training steps
  in f32 and bf16 and with Adam (the project's venv).
- flax_2d_mesh: a Flax Linen language model sharded by logical axis rules on a 2 x 2 mesh, its
  forward and AdamW step (the libraries venv).
- pytorch_spmd: PyTorch/XLA SPMD training steps (the batch marked split over 4 virtual devices:
  MLPs, batch and layer norms, a TransformerEncoderLayer), compiled by the pinned XLA for the 4
  partitions.
- pytorch_spmd_2d: examples/harvest/torch_spmd_2d.py's SPMD steps on a 2 x 2 mesh (Megatron-style
  weights along one axis, the batch along the other; weights along both), compiled as pytorch_spmd.
- older_jax: examples/harvest/transformer_variants.py and jax_cnn.py lowered by JAX 0.4.13
  (requirements-older-jax.txt, not on top of the project's pins), then compiled by the pinned
  XLA (compile_with_pinned_xla.py), whose result is the reference as for every other module.
- training_steps: examples/harvest/training_steps.py's training steps written by hand in plain
  JAX (AdamW with an f32 step count, a GPT-style LM unrolled and scanned under remat, a CNN with
  batch norm, an MLP-Mixer, a VAE, a selective scan, a diffusion U-Net, an encoder-decoder),
  500 instructions or more (the project's venv); older_jax_training_steps: the same program
  lowered by JAX 0.4.13, then compiled by the pinned XLA as older_jax.
- jax_0_4_30, jax_0_6_2: the same two programs lowered by JAX 0.4.30 (June 2024) and 0.6.2
  (June 2025), releases between 0.4.13 and the pin, each compiled by the pinned XLA as older_jax.
- older_jax_pmap: examples/harvest/jax_pmap_step.py (jax.pmap training steps of an MLP and a CNN)
  lowered by JAX 0.4.13, 0.4.30 and 0.6.2, which write them for 4 replicas, each compiled by the
  pinned XLA.
- older_xla_optimized: what JAX 0.4.13's own XLA made of the same two programs (its
  after-optimizations modules: fusions, layouts, XLA:CPU's rewrites), handed to the pinned XLA,
  each in a process of its own (XLA:CPU's emitter aborts on some after its HLO passes).
- tf_detection: examples/harvest/tf_detection.py (a single-shot detector with non-max
  suppression, TensorFlow 2.21 from datasets/corpus/requirements-tensorflow.txt), lowered by
  TensorFlow's own XLA and then compiled by the pinned one, as older_jax.
- tf_keras_steps: examples/harvest/tf_keras_steps.py (Keras fits of a transformer encoder in f32
  and mixed_float16, a text CNN, a decoder and a residual CNN; a tf.scan RNN, a graph network step,
  STFT features and top_k/argsort/cumsum by tf.function), lowered by TensorFlow 2.21's XLA and
  compiled by the pinned one as tf_detection; modules of 20 instructions or more.
- tf_dynamic_shapes: examples/harvest/tf_dynamic_shapes.py (Keras embedding fits under ten
  optimizers, whose sparse gradients give dynamic shapes through conditionals; tf.unique, boolean
  masks and tf.where steps), lowered by TensorFlow 2.21's XLA and compiled by the pinned one as
  tf_detection; modules of 20 instructions or more.
- tf_scientific: examples/harvest/tf_scientific.py (TensorFlow Probability's HMC, NUTS, variational,
  Gaussian process and normalizing-flow steps; tf.linalg, image resampling, scatters and gathers
  by index) under TensorFlow 2.21 with TensorFlow Probability (requirements-tf-scientific.txt),
  lowered by TensorFlow's XLA and compiled by the pinned one as tf_detection; modules of 20
  instructions or more.
- tf_2_12: examples/harvest/tf_mlp.py and tf_detection.py lowered by TensorFlow 2.12's XLA (March
  2023; requirements-tf-2.12.txt), then compiled by the pinned XLA as tf_detection.
- pytorch_collectives: examples/harvest/torch_collectives.py's data-parallel, ZeRO-style,
  pipeline-stage and expert-parallel steps (all-reduce, reduce-scatter, all-gather,
  collective-permute, all-to-all) traced by PyTorch/XLA (datasets/corpus/requirements-torch.txt)
  for four replicas, then compiled by the pinned XLA for four replicas.
- keras_applications: examples/harvest/keras_applications.py's MobileNetV3, ResNet50V2,
  EfficientNetV2 and DenseNet-121 trained and run by Keras on TensorFlow with jit_compile
  (datasets/corpus/requirements-tensorflow.txt), then compiled by the pinned XLA as tf_detection.
- torchvision_models, torch_transformers: examples/harvest/torchvision_models.py's ResNet,
  MobileNetV3, EfficientNet, ConvNeXt and ViT steps and torch_transformers.py's BERT, GPT-2, Llama
  and T5 steps on PyTorch/XLA (torchvision and Hugging Face transformers,
  requirements-torch-libraries.txt, added to the PyTorch/XLA venv), as the pinned XLA receives
  them.
- torch_ops: examples/harvest/torch_ops.py's PyTorch operations none of those use (LSTM, GRU,
  CTC, grid_sample, EmbeddingBag, cumulative ops, scatter_reduce, ...) on PyTorch/XLA, with torch
  alone, as the pinned XLA receives them.
- torchax_models: examples/harvest/torchax_models.py (torchvision's and Hugging Face's models and
  torch operations lowered by JAX through torchax, with torch 2.9.0; requirements-torchax.txt),
  compiled by the pinned XLA as every JAX program is.
- pytorch_as_received, tensorflow_as_received: datasets/pytorch and the corpus's TensorFlow
  families as the pinned XLA receives them (after jaxlib's import of their HLO text).

    .venv/bin/python datasets/probes/generate.py [PROBE ...]   # all of them by default

Deterministic: the programs seed every random number, and the packing drops what ties a module's
text to the machine that made it (source paths, Python objects' addresses, the checkout's path in
newer JAX's FileNames table; probes packed before that rule, up to tf_dynamic_shapes, still name
/work/main there until they are regenerated, which their XLA reference does not depend on).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "datasets" / "corpus"))
from generate import zstd_compress  # noqa: E402

from hlogym.harvest import TEST_FRACTION_DENOMINATOR, harvest  # noqa: E402

PINS = REPO / "requirements.txt"
CORPUS_LIBRARIES = REPO / "datasets" / "corpus" / "requirements-libraries.txt"
EXAMPLES = REPO / "examples" / "harvest"
# Leaves out JAX's smallest helpers (seeding, unstacking); its random initializers (100-400
# instructions) stay, beside the programs' own modules.
MIN_INSTRUCTIONS = 100


def venv(name: str, requirements: list[Path]) -> Path:
    """build/venvs/probe-NAME's python, made from `requirements` when missing."""
    root = REPO / "build" / "venvs" / f"probe-{name}"
    python = root / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        args = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        for r in requirements:
            args += ["-r", str(r)]
        subprocess.run(args, check=True)
    return python


# What ties a module's text to the machine that made it: source paths in its metadata (JAX 0.4.13
# writes them), Python objects' addresses in names (its argmax reducer's), and the checkout's
# absolute path in the FileNames table newer JAX writes (made relative to the repository).
_SOURCE_PATH = re.compile(r'\s*source_file="[^"]*"(\s*source_line=\d+)?(\s*source_end_line=\d+)?')
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
_CHECKOUT = f'"{REPO}/'


def pack(staging: Path, out: Path) -> None:
    """`staging` (as harvest wrote it) into `out`: modules without what ties them to this
    machine (their sha256, size and split follow), modules and references zstd-compressed, the
    command's paths relative to the repository."""
    manifest = json.loads((staging / "manifest.json").read_text())
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    for entry in manifest["modules"].values():
        text = (staging / entry["path"]).read_text()
        text = _ADDRESS.sub("0x0", _SOURCE_PATH.sub("", text)).replace(_CHECKOUT, '"').encode()
        sha = hashlib.sha256(text).hexdigest()
        entry.update(sha256=sha, bytes=len(text))
        entry["split"] = "test" if int(sha, 16) % TEST_FRACTION_DENOMINATOR == 0 else "train"
        contents = {"path": text, "xla_reference": (staging / entry["xla_reference"]).read_bytes()}
        for key, data in contents.items():
            target = tmp / f"{entry[key]}.zst"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zstd_compress(data))
            entry[key] += ".zst"
    manifest["command"] = [
        os.path.relpath(c, REPO) if Path(c).is_absolute() else c for c in manifest["command"]
    ]
    (tmp / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def with_header_attribute(text: str, attribute: str) -> str:
    """`text` with `attribute` ("replica_count=4") first on its HloModule line: older XLA's dumps
    leave the replica count out, and hlogym's passes need the one XLA compiled the module for.
    Where the line names it already (today's dumps print it last) that copy goes: XLA's parser,
    and hlogym's, reject an attribute named twice."""
    first, _, rest = text.partition("\n")
    key = attribute.split("=", 1)[0]
    first = re.sub(rf",\s*{re.escape(key)}=[^,\s]+", "", first)
    first = re.sub(r"^(HloModule [^,\s]+)", rf"\1, {attribute}", first, count=1)
    return f"{first}\n{rest}" if rest or text.endswith("\n") else first


def distribution_versions(python: Path, distributions: list[str]) -> dict[str, str]:
    """The installed versions of `distributions` in `python`'s environment, without a local
    suffix ("+cpu")."""
    script = (
        "import importlib.metadata as m, json, sys\n"
        "print(json.dumps({d: m.version(d).split('+')[0] for d in sys.argv[1:]}))"
    )
    out = subprocess.run(
        [str(python), "-c", script, *distributions], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def harvest_probe(
    name: str,
    command: list[str],
    family: str | None = None,
    min_instructions: int = MIN_INSTRUCTIONS,
) -> Path:
    staging = REPO / "build" / "probes" / name
    harvest(command, staging, force=True, family=family or name, min_instructions=min_instructions)
    return staging


def transformer_variants() -> Path:
    # The project's own venv: its pins are this probe's.
    return harvest_probe(
        "transformer_variants", [sys.executable, str(EXAMPLES / "transformer_variants.py")]
    )


def loop_forms() -> Path:
    # Small by nature (a loop and its state): every module of 20 instructions or more.
    return harvest_probe(
        "loop_forms", [sys.executable, str(EXAMPLES / "loop_forms.py")], min_instructions=20
    )


def lax_ops() -> Path:
    # One program per family of operations, some of them small: 20 instructions or more.
    return harvest_probe(
        "lax_ops", [sys.executable, str(EXAMPLES / "lax_ops.py")], min_instructions=20
    )


def library_transformers() -> Path:
    python = venv("libraries", [PINS, CORPUS_LIBRARIES, HERE / "requirements-libraries.txt"])
    return harvest_probe(
        "library_transformers", [str(python), str(EXAMPLES / "library_transformers.py")]
    )


def optimizers() -> Path:
    python = venv("libraries", [PINS, CORPUS_LIBRARIES, HERE / "requirements-libraries.txt"])
    return harvest_probe("optimizers", [str(python), str(EXAMPLES / "optimizers.py")])


def more_jax_libraries() -> Path:
    python = venv(
        "more-libraries", [PINS, CORPUS_LIBRARIES, HERE / "requirements-more-libraries.txt"]
    )
    # Small programs among them (segment reductions, a Hessian): 40 instructions or more.
    return harvest_probe(
        "more_jax_libraries",
        [str(python), str(EXAMPLES / "more_jax_libraries.py")],
        min_instructions=40,
    )


def partitioned() -> Path:
    python = venv("libraries", [PINS, CORPUS_LIBRARIES, HERE / "requirements-libraries.txt"])
    # The ring, ZeRO and replicated-parameter programs are small: 40 instructions or more.
    return harvest_probe(
        "partitioned", [str(python), str(EXAMPLES / "partitioned.py")], min_instructions=40
    )


def jax_data_parallel() -> Path:
    # The project's own venv: its jaxlib is the pinned XLA. Small steps: 40 instructions or more.
    return harvest_probe(
        "jax_data_parallel",
        [sys.executable, str(EXAMPLES / "jax_data_parallel.py")],
        min_instructions=40,
    )


def jax_tensor_parallel() -> Path:
    # The project's own venv, as jax_data_parallel. Small steps: 40 instructions or more.
    return harvest_probe(
        "jax_tensor_parallel",
        [sys.executable, str(EXAMPLES / "jax_tensor_parallel.py")],
        min_instructions=40,
    )


def jax_fsdp() -> Path:
    # The project's own venv, as jax_data_parallel. Small programs: 7 instructions or more (JAX's
    # slicing helpers have 6).
    return harvest_probe(
        "jax_fsdp", [sys.executable, str(EXAMPLES / "jax_fsdp.py")], min_instructions=7
    )


def jax_2d_mesh() -> Path:
    # The project's own venv, as jax_fsdp.
    return harvest_probe(
        "jax_2d_mesh", [sys.executable, str(EXAMPLES / "jax_2d_mesh.py")], min_instructions=7
    )


def flax_2d_mesh() -> Path:
    """examples/harvest/flax_2d_mesh.py's Flax LM sharded by logical axes on a 2 x 2 mesh: its
    forward and AdamW step (the initializers' helpers, compiled for one device, left out)."""
    python = venv("libraries", [PINS, CORPUS_LIBRARIES, HERE / "requirements-libraries.txt"])
    return harvest_probe(
        "flax_2d_mesh", [str(python), str(EXAMPLES / "flax_2d_mesh.py")], min_instructions=350
    )


def pytorch_spmd(name: str = "pytorch_spmd", program: str = "torch_spmd.py") -> Path:
    """examples/harvest/torch_spmd.py's SPMD steps (or `program`'s) as PyTorch/XLA hands them to
    XLA (4 partitions), then compiled by the pinned XLA for the 4 partitions."""
    python = venv("torch", [REPO / "datasets" / "corpus" / "requirements-torch.txt"])
    lowered = REPO / "build" / "probes" / f"{name}_lowered"
    harvest(
        [str(python), str(EXAMPLES / program)],
        lowered,
        force=True,
        family="lowered",
        min_instructions=MIN_INSTRUCTIONS,
    )
    staging = REPO / "build" / "probes" / name
    command = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), str(lowered / "lowered")]
    harvest(command, staging, force=True, family=name, min_instructions=MIN_INSTRUCTIONS)
    manifest = json.loads((staging / "manifest.json").read_text())
    for entry in manifest["modules"].values():
        entry["frontend"] = "pytorch"
    manifest["versions"] = json.loads((lowered / "manifest.json").read_text())["versions"]
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def ode_solvers() -> Path:
    python = venv("ode", [PINS, HERE / "requirements-ode.txt"])
    return harvest_probe("ode_solvers", [str(python), str(EXAMPLES / "diffrax_solvers.py")])


def probabilistic() -> Path:
    python = venv("probabilistic", [PINS, HERE / "requirements-probabilistic.txt"])
    return harvest_probe("probabilistic", [str(python), str(EXAMPLES / "probabilistic.py")])


def jax_simulation() -> Path:
    python = venv("simulation", [PINS, HERE / "requirements-simulation.txt"])
    # Environment steps and integrators are small: 20 instructions or more.
    return harvest_probe(
        "jax_simulation",
        [str(python), str(EXAMPLES / "jax_simulation.py")],
        min_instructions=20,
    )


def quantized_and_puzzles() -> Path:
    python = venv("quantized-puzzles", [PINS, HERE / "requirements-quantized-puzzles.txt"])
    # Environment resets and steps are small: 20 instructions or more.
    return harvest_probe(
        "quantized_and_puzzles",
        [str(python), str(EXAMPLES / "jax_quantized_and_puzzles.py")],
        min_instructions=20,
    )


def mjx_physics() -> Path:
    python = venv("mjx-physics", [PINS, HERE / "requirements-mjx-physics.txt"])
    return harvest_probe("mjx_physics", [str(python), str(EXAMPLES / "jax_mjx_physics.py")])


def jax_quantum() -> Path:
    python = venv("quantum", [PINS, HERE / "requirements-quantum.txt"])
    # NetKet's sampling helpers are small: 20 instructions or more.
    return harvest_probe(
        "jax_quantum", [str(python), str(EXAMPLES / "jax_quantum.py")], min_instructions=20
    )


def jax_scientific() -> Path:
    python = venv("scientific", [PINS, HERE / "requirements-scientific.txt"])
    return harvest_probe("jax_scientific", [str(python), str(EXAMPLES / "jax_scientific.py")])


def lowered_elsewhere(
    name: str, python: Path, programs: list[str], min_instructions: int = MIN_INSTRUCTIONS
) -> Path:
    """Modules another frontend version lowered: the programs run under `python` first (its own
    XLA compiles them, which is what XLA's dumps record); then each module as that XLA received
    it goes to the pinned XLA, whose result is the reference."""
    lowered = REPO / "build" / "probes" / f"{name}_lowered"
    shutil.rmtree(lowered, ignore_errors=True)
    for program in programs:
        harvest(
            [str(python), str(EXAMPLES / f"{program}.py")],
            lowered / program,
            family="lowered",
            min_instructions=min_instructions,
        )
    staging = REPO / "build" / "probes" / name
    folders = [str(lowered / program / "lowered") for program in programs]
    compile_step = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), *folders]
    harvest(compile_step, staging, force=True, family=name, min_instructions=min_instructions)
    manifest = json.loads((staging / "manifest.json").read_text())
    lowered_by = json.loads((lowered / programs[0] / "manifest.json").read_text())["versions"]
    manifest["versions"] = lowered_by  # the frontend that lowered them, not the compile step's
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


# The training steps' helpers (PRNG splits, initializers) are small; the steps have 500 or more.
TRAINING_STEP_MIN_INSTRUCTIONS = 500


def training_steps() -> Path:
    # The project's own venv: its pins are this probe's.
    return harvest_probe(
        "training_steps",
        [sys.executable, str(EXAMPLES / "training_steps.py")],
        min_instructions=TRAINING_STEP_MIN_INSTRUCTIONS,
    )


def older_jax_training_steps() -> Path:
    python = venv("older-jax", [HERE / "requirements-older-jax.txt"])
    return lowered_elsewhere(
        "older_jax_training_steps",
        python,
        ["training_steps"],
        min_instructions=TRAINING_STEP_MIN_INSTRUCTIONS,
    )


def older_jax() -> Path:
    python = venv("older-jax", [HERE / "requirements-older-jax.txt"])
    return lowered_elsewhere("older_jax", python, ["transformer_variants", "jax_cnn"])


def jax_version(version: str) -> Path:
    """The older_jax programs and jax_2d_mesh's (GSPMD's shardings, with no mesh named, in JAX
    0.4.30) lowered by another JAX release between JAX 0.4.13 and the pin
    (requirements-jax-VERSION.txt), then compiled by the pinned XLA."""
    python = venv(f"jax-{version}", [HERE / f"requirements-jax-{version}.txt"])
    name = "jax_" + version.replace(".", "_")
    return lowered_elsewhere(name, python, ["transformer_variants", "jax_cnn", "jax_2d_mesh"])


def older_jax_pmap() -> Path:
    """examples/harvest/jax_pmap_step.py lowered by JAX 0.4.13, 0.4.30 and 0.6.2, which lower
    jax.pmap for replicas (today's JAX: a shard_map over partitions, the partitioned probe), each
    module then compiled by the pinned XLA for its 4 replicas."""
    lowered = REPO / "build" / "probes" / "older_jax_pmap_lowered"
    shutil.rmtree(lowered, ignore_errors=True)
    folders, lowered_by = [], {}
    for name, requirements in (
        ("older-jax", "requirements-older-jax.txt"),
        ("jax-0.4.30", "requirements-jax-0.4.30.txt"),
        ("jax-0.6.2", "requirements-jax-0.6.2.txt"),
    ):
        python = venv(name, [HERE / requirements])
        harvest(
            [str(python), str(EXAMPLES / "jax_pmap_step.py")],
            lowered / name,
            family="lowered",
            min_instructions=MIN_INSTRUCTIONS,
        )
        folders.append(str(lowered / name / "lowered"))
        # JAX 0.4.13's XLA prints no replica count: the program pmaps over 4 devices.
        for path in (lowered / name / "lowered").glob("*.hlo"):
            text = path.read_text()
            if not re.search(r"\breplica_count=", text.split("\n", 1)[0]):
                path.write_text(with_header_attribute(text, "replica_count=4"))
        versions = json.loads((lowered / name / "manifest.json").read_text())["versions"]
        lowered_by[name] = versions["jax"]
    staging = REPO / "build" / "probes" / "older_jax_pmap"
    compile_step = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), *folders]
    harvest(
        compile_step,
        staging,
        force=True,
        family="older_jax_pmap",
        min_instructions=MIN_INSTRUCTIONS,
    )
    manifest = json.loads((staging / "manifest.json").read_text())
    # XLA's dumps leave the header's replica count out; every step was lowered for the same 4.
    counts = {
        re.search(r"\breplica_count=\d+", path.read_text().split("\n", 1)[0])[0]
        for folder in folders
        for path in Path(folder).glob("*.hlo")
    }
    if len(counts) != 1:
        raise SystemExit(f"older_jax_pmap: the lowered modules disagree on replicas: {counts}")
    (replicas,) = counts
    for entry in manifest["modules"].values():
        module = staging / entry["path"]
        module.write_text(with_header_attribute(module.read_text(), replicas))
    manifest["lowered_by"] = sorted(lowered_by.values())
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def older_xla_optimized() -> Path:
    """The optimized modules that JAX 0.4.13's XLA writes for the older_jax programs (what users of
    an older XLA find in their dumps as after_optimizations), each compiled by the pinned XLA."""
    python = venv("older-jax", [HERE / "requirements-older-jax.txt"])
    written = REPO / "build" / "probes" / "older_xla_optimized_written"
    shutil.rmtree(written, ignore_errors=True)
    modules = written / "after_optimizations"
    modules.mkdir(parents=True)
    env = dict(os.environ, JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    for program in ("transformer_variants", "jax_cnn"):
        dump = written / "dump" / program
        env["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_hlo_as_text"
        subprocess.run([str(python), str(EXAMPLES / f"{program}.py")], env=env, check=True)
        for path in sorted(dump.glob("module_*.cpu_after_optimizations.txt")):
            name = path.name.removeprefix("module_").removesuffix(".cpu_after_optimizations.txt")
            shutil.copy(path, modules / f"{program}.{name}.hlo")
    staging = REPO / "build" / "probes" / "older_xla_optimized"
    compile_step = [
        sys.executable,
        str(HERE / "compile_with_pinned_xla.py"),
        "--each-in-a-child",
        str(modules),
    ]
    harvest(
        compile_step,
        staging,
        force=True,
        family="older_xla_optimized",
        min_instructions=MIN_INSTRUCTIONS,
    )
    manifest = json.loads((staging / "manifest.json").read_text())
    written_by = subprocess.run(
        [str(python), "-c", "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # The XLA that wrote them; they are XLA's optimized modules, not a frontend's.
    manifest["versions"] = {"jax": written_by[0], "jaxlib": written_by[1]}
    manifest["xla_optimized"] = True
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def tf_detection() -> Path:
    tf_pins = REPO / "datasets" / "corpus" / "requirements-tensorflow.txt"
    python = venv("tensorflow", [PINS, tf_pins])
    return lowered_elsewhere("tf_detection", python, ["tf_detection"])


def keras_applications() -> Path:
    tf_pins = REPO / "datasets" / "corpus" / "requirements-tensorflow.txt"
    python = venv("tensorflow", [PINS, tf_pins])
    return lowered_elsewhere("keras_applications", python, ["keras_applications"])


def tf_keras_steps() -> Path:
    tf_pins = REPO / "datasets" / "corpus" / "requirements-tensorflow.txt"
    python = venv("tensorflow", [PINS, tf_pins])
    # STFT features and a graph network step are small: 20 instructions or more.
    return lowered_elsewhere("tf_keras_steps", python, ["tf_keras_steps"], min_instructions=20)


def tf_dynamic_shapes() -> Path:
    tf_pins = REPO / "datasets" / "corpus" / "requirements-tensorflow.txt"
    python = venv("tensorflow", [PINS, tf_pins])
    # The tf.function steps are small: 20 instructions or more.
    return lowered_elsewhere(
        "tf_dynamic_shapes", python, ["tf_dynamic_shapes"], min_instructions=20
    )


def tf_scientific() -> Path:
    tf_pins = REPO / "datasets" / "corpus" / "requirements-tensorflow.txt"
    python = venv("tf-scientific", [PINS, tf_pins, HERE / "requirements-tf-scientific.txt"])
    return lowered_elsewhere("tf_scientific", python, ["tf_scientific"], min_instructions=20)


def tf_2_12() -> Path:
    python = venv("tf-2.12", [HERE / "requirements-tf-2.12.txt"])
    return lowered_elsewhere("tf_2_12", python, ["tf_mlp", "tf_detection"])


def as_received(name: str, dataset: Path, families: list[str], frontend: str) -> Path:
    """The project's own modules of another frontend as the pinned XLA receives them: jaxlib
    compiles StableHLO only, and its import of PyTorch/XLA's and TensorFlow's HLO text already
    canonicalizes it, so the passes' fidelity shows on what XLA's pipeline starts from."""
    folders = [str(dataset / family) for family in families]
    command = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), *folders]
    staging = REPO / "build" / "probes" / name
    harvest(command, staging, force=True, family=name, min_instructions=10)
    manifest = json.loads((staging / "manifest.json").read_text())
    source = json.loads((dataset / "manifest.json").read_text())
    for entry in manifest["modules"].values():
        entry["frontend"] = frontend
    keys = ("torch", "torch_xla") if frontend == "pytorch" else ("tensorflow",)
    manifest["versions"] = {k: v for k, v in source["versions"].items() if k in keys}
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def pytorch_collectives() -> Path:
    """examples/harvest/torch_collectives.py's distributed steps, traced by PyTorch/XLA (nothing
    runs), then compiled by the pinned XLA for the four replicas their collectives are written
    for. XLA's dump of a module as received does not print its replica count: it goes back into
    each kept module's header, so that hlogym's passes see the replicas XLA's saw."""
    python = venv("torch", [REPO / "datasets" / "corpus" / "requirements-torch.txt"])
    traced = REPO / "build" / "probes" / "pytorch_collectives_traced"
    shutil.rmtree(traced, ignore_errors=True)
    subprocess.run(
        [str(python), str(EXAMPLES / "torch_collectives.py"), str(traced)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    staging = REPO / "build" / "probes" / "pytorch_collectives"
    command = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), str(traced)]
    harvest(command, staging, force=True, family="pytorch_collectives", min_instructions=10)
    manifest = json.loads((staging / "manifest.json").read_text())
    for name, entry in manifest["modules"].items():
        traced_header = (traced / f"{name}.hlo").read_text().split("\n", 1)[0]
        replicas = re.search(r"\breplica_count=\d+", traced_header)[0]
        module = staging / entry["path"]
        module.write_text(with_header_attribute(module.read_text(), replicas))
        entry["frontend"] = "pytorch"
    versions = subprocess.run(
        [
            str(python),
            "-c",
            "import torch, torch_xla; print(torch.__version__, torch_xla.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    manifest["versions"] = {"torch": versions[0], "torch_xla": versions[1]}
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def pytorch_library_probe(name: str, library: str | None) -> Path:
    """examples/harvest/NAME.py's PyTorch/XLA programs, built with `library` (a package of
    requirements-torch-libraries.txt) or with torch alone (None), as the pinned XLA receives them:
    traced and compiled once by PyTorch/XLA (its own XLA), then compiled by the pinned one, whose
    pass log gives X."""
    python = venv("torch", [REPO / "datasets" / "corpus" / "requirements-torch.txt"])
    # The torch venv predates these probes: their libraries go in on every run (a no-op once
    # they are there).
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
            str(HERE / "requirements-torch-libraries.txt"),
        ],
        check=True,
    )
    traced = REPO / "build" / "probes" / f"{library or name}_traced"
    harvest(
        [str(python), str(EXAMPLES / f"{name}.py")],
        traced,
        force=True,
        family=name,
        min_instructions=MIN_INSTRUCTIONS,
    )
    staging = REPO / "build" / "probes" / name
    command = [sys.executable, str(HERE / "compile_with_pinned_xla.py"), str(traced / name)]
    # Every traced module stays: the pinned XLA's import already shrinks some below the
    # threshold the traced ones passed (a QR and solve graph of 173 instructions reaches it
    # with 92).
    harvest(command, staging, force=True, family=name, min_instructions=1)
    manifest = json.loads((staging / "manifest.json").read_text())
    for entry in manifest["modules"].values():
        entry["frontend"] = "pytorch"
    versions = json.loads((traced / "manifest.json").read_text())["versions"]
    manifest["versions"] = {k: v for k, v in versions.items() if k in ("torch", "torch_xla")}
    if library is not None:
        manifest["versions"].update(distribution_versions(python, [library]))
    manifest["xla_reference_from"] = "the pinned jaxlib (requirements.txt)"
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def torchax_models() -> Path:
    python = venv("torchax", [PINS, HERE / "requirements-torchax.txt"])
    staging = harvest_probe("torchax_models", [str(python), str(EXAMPLES / "torchax_models.py")])
    # Lowered by JAX from PyTorch's programs: the PyTorch side's versions are recorded too.
    manifest = json.loads((staging / "manifest.json").read_text())
    manifest["versions"].update(
        distribution_versions(python, ["torch", "torchax", "torchvision", "transformers"])
    )
    (staging / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
    return staging


def pytorch_as_received() -> Path:
    families = ["pt_cnn", "pt_mlp", "pt_transformer"]
    return as_received("pytorch_as_received", REPO / "datasets" / "pytorch", families, "pytorch")


def tensorflow_as_received() -> Path:
    families = ["tf_bert", "tf_dlrm", "tf_mobilenetv2", "tf_rnn"]
    return as_received(
        "tensorflow_as_received", REPO / "datasets" / "corpus", families, "tensorflow"
    )


PROBES = {
    "transformer_variants": transformer_variants,
    "loop_forms": loop_forms,
    "lax_ops": lax_ops,
    "library_transformers": library_transformers,
    "ode_solvers": ode_solvers,
    "probabilistic": probabilistic,
    "jax_simulation": jax_simulation,
    "quantized_and_puzzles": quantized_and_puzzles,
    "mjx_physics": mjx_physics,
    "jax_scientific": jax_scientific,
    "jax_quantum": jax_quantum,
    "optimizers": optimizers,
    "partitioned": partitioned,
    "jax_data_parallel": jax_data_parallel,
    "jax_tensor_parallel": jax_tensor_parallel,
    "jax_fsdp": jax_fsdp,
    "jax_2d_mesh": jax_2d_mesh,
    "flax_2d_mesh": flax_2d_mesh,
    "more_jax_libraries": more_jax_libraries,
    "pytorch_spmd": pytorch_spmd,
    "pytorch_spmd_2d": lambda: pytorch_spmd("pytorch_spmd_2d", "torch_spmd_2d.py"),
    "training_steps": training_steps,
    "older_jax": older_jax,
    "older_jax_training_steps": older_jax_training_steps,
    "older_xla_optimized": older_xla_optimized,
    "jax_0_4_30": lambda: jax_version("0.4.30"),
    "jax_0_6_2": lambda: jax_version("0.6.2"),
    "older_jax_pmap": older_jax_pmap,
    "tf_detection": tf_detection,
    "keras_applications": keras_applications,
    "tf_keras_steps": tf_keras_steps,
    "tf_dynamic_shapes": tf_dynamic_shapes,
    "tf_scientific": tf_scientific,
    "tf_2_12": tf_2_12,
    "pytorch_collectives": pytorch_collectives,
    "torchvision_models": lambda: pytorch_library_probe("torchvision_models", "torchvision"),
    "torch_transformers": lambda: pytorch_library_probe("torch_transformers", "transformers"),
    "torch_ops": lambda: pytorch_library_probe("torch_ops", None),
    "torchax_models": torchax_models,
    "pytorch_as_received": pytorch_as_received,
    "tensorflow_as_received": tensorflow_as_received,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probes", nargs="*", help=f"some of {', '.join(PROBES)} (default: all)")
    names = parser.parse_args().probes or list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        parser.error(f"unknown probe {', '.join(unknown)} (the probes: {', '.join(PROBES)})")
    for name in names:
        pack(PROBES[name](), HERE / name)
        modules = json.loads((HERE / name / "manifest.json").read_text())["modules"]
        print(f"datasets/probes/{name}: {len(modules)} modules")


if __name__ == "__main__":
    main()
